// A Claude Code hook in Node: records its input and transcript, then answers per env.
const fs = require("fs");
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const event = JSON.parse(input);
  let transcript = [];
  if (event.transcript_path) {
    transcript = fs.readFileSync(event.transcript_path, "utf8")
      .split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  }
  const record = {
    lang: "node",
    project_dir: process.env.CLAUDE_PROJECT_DIR || null,
    plugin_root: process.env.CLAUDE_PLUGIN_ROOT || null,
    input: event,
    transcript,
  };
  fs.appendFileSync(process.env.HOOK_LOG, JSON.stringify(record) + "\n");
  let answer = process.env.HOOK_ANSWER;
  if (event.stop_hook_active && process.env.HOOK_ONCE) answer = "";
  if (answer) process.stdout.write(answer + "\n");
  if (process.env.HOOK_STDERR) process.stderr.write(process.env.HOOK_STDERR);
  process.exit(parseInt(process.env.HOOK_EXIT || "0", 10));
});
