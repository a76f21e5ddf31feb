// The agentrig chat page: talks to the server's own API (/v1/models, /v1/responses streamed,
// /v1/sessions, /v1/approvals). No build step, no dependency; text goes in with textContent only.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { previous: null, sessionId: null, busy: false };

// this launch's token: the server takes API calls from a browser only with it
const pageToken = document.querySelector('meta[name="agentrig-page-token"]').content;

function headers(json) {
  const h = { "x-agentrig-page-token": pageToken };
  if (json) h["content-type"] = "application/json";
  const key = $("key").value || sessionStorage.getItem("agentrig-key") || "";
  if (key) h["authorization"] = "Bearer " + key;
  return h;
}

function status(text) { $("status").textContent = text || ""; }

async function api(path, options) {
  const response = await fetch(path, options || { headers: headers(false) });
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try { message = (await response.json()).error.message || message; } catch (e) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

function add(cls, text) {
  const div = document.createElement("div");
  div.className = "turn " + cls;
  if (text) div.textContent = text;
  $("transcript").appendChild(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

function toolBox(parent, name, args) {
  const box = document.createElement("div");
  box.className = "tool";
  const call = document.createElement("div");
  call.className = "call";
  call.textContent = "\u2699 " + name + " " + args;
  const result = document.createElement("div");
  result.className = "result";
  box.append(call, result);
  parent.appendChild(box);
  return box;
}

function approvalBox(parent, item) {
  const box = document.createElement("div");
  box.className = "approval";
  box.dataset.approval = item.id;
  const text = document.createElement("div");
  text.textContent = "Approve " + item.name + " " + item.arguments + "?";
  const allow = document.createElement("button");
  allow.type = "button"; allow.textContent = "Allow"; allow.className = "allow";
  const deny = document.createElement("button");
  deny.type = "button"; deny.textContent = "Deny"; deny.className = "deny";
  const answer = async (decision) => {
    allow.disabled = deny.disabled = true;
    try {
      await api("/v1/approvals/" + encodeURIComponent(item.id), {
        method: "POST", headers: headers(true), body: JSON.stringify({ decision }),
      });
      text.textContent += " \u2192 " + decision;
    } catch (e) { status(e.message); }
  };
  allow.addEventListener("click", () => answer("allow"));
  deny.addEventListener("click", () => answer("deny"));
  box.append(text, allow, deny);
  parent.appendChild(box);
}

async function loadModels() {
  const body = await (await api("/v1/models")).json();
  const select = $("agent");
  select.textContent = "";
  for (const model of body.data) {
    const option = document.createElement("option");
    option.value = option.textContent = model.id;
    select.appendChild(option);
  }
}

async function loadSessions() {
  const body = await (await api("/v1/sessions")).json();
  const list = $("sessions");
  list.textContent = "";
  for (const session of body.data) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.session = session.id;
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = session.title || "(untitled)";
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = session.model + " \u00b7 " + new Date(session.updated * 1000).toLocaleString();
    button.append(title, meta);
    button.addEventListener("click", () => openSession(session.id));
    li.appendChild(button);
    list.appendChild(li);
  }
}

async function openSession(id) {
  const body = await (await api("/v1/sessions/" + encodeURIComponent(id))).json();
  $("transcript").textContent = "";
  state.previous = body.last_response_id;
  state.sessionId = body.id;
  $("agent").value = body.model;
  const boxes = {};
  let current = null;
  for (const message of body.messages) {
    if (message.role === "user") { add("user", message.text); current = null; }
    else if (message.role === "summary") { add("summary", message.text); current = null; }
    else if (message.role === "assistant") {
      current = current || add("assistant", "");
      if (message.text) current.appendChild(document.createTextNode(message.text));
      for (const call of message.tool_calls) {
        boxes[call.id] = toolBox(current, call.name, JSON.stringify(call.arguments));
      }
    } else if (message.role === "tool") {
      const box = boxes[message.call_id];
      if (box) {
        box.querySelector(".result").textContent = "\u2192 " + message.text;
        if (message.status !== "ok") box.classList.add("failed");
      }
    }
  }
}

function parseEvents(buffer, onEvent) {
  let index;
  while ((index = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, index);
    buffer = buffer.slice(index + 2);
    const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("\n");
    if (data) onEvent(JSON.parse(data));
  }
  return buffer;
}

async function send(text) {
  state.busy = true;
  $("send").disabled = true;
  status("");
  add("user", text);
  const turn = add("assistant", "");
  let textNode = null;
  const calls = {};
  const body = { model: $("agent").value, input: text, stream: true, store: true };
  if (state.previous) body.previous_response_id = state.previous;
  try {
    const response = await api("/v1/responses", {
      method: "POST", headers: headers(true), body: JSON.stringify(body),
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = parseEvents(buffer + decoder.decode(value, { stream: true }), (event) => {
        if (event.type === "response.output_text.delta") {
          if (!textNode) { textNode = document.createTextNode(""); turn.appendChild(textNode); }
          textNode.data += event.delta;
        } else if (event.type === "response.output_item.added" && event.item.type === "mcp_call") {
          calls[event.item.id] = toolBox(turn, event.item.name, event.item.arguments);
          textNode = null;
        } else if (event.type === "response.output_item.done" && event.item.type === "mcp_call") {
          const box = calls[event.item.id];
          box.querySelector(".result").textContent = "\u2192 " + (event.item.output ?? event.item.error);
          if (event.item.status !== "completed") box.classList.add("failed");
        } else if (event.type === "response.output_item.added" && event.item.type === "mcp_approval_request") {
          approvalBox(turn, event.item);
          textNode = null;
        } else if (["response.completed", "response.incomplete", "response.failed"].includes(event.type)) {
          state.previous = event.response.id;
          if (event.response.conversation) state.sessionId = event.response.conversation.id;
          turn.dataset.done = event.response.status;
          if (event.type !== "response.completed") {
            // cut short, filtered or failed: say so, instead of an answer that just stops
            const reason = (event.response.incomplete_details || {}).reason;
            const note = document.createElement("div");
            note.className = "stopped";
            note.textContent = event.type === "response.failed"
              ? "The model reported an error instead of an answer."
              : reason === "content_filter"
                ? "Stopped: the model refused, or a content filter stopped the answer."
                : "Stopped before the end: the run reached a limit " +
                  "(its token or time budget, or the output limit).";
            turn.appendChild(note);
          }
        } else if (event.type === "error") {
          status(event.message);
        }
      });
    }
    await loadSessions();
  } catch (e) {
    status(e.message);
  } finally {
    state.busy = false;
    $("send").disabled = false;
  }
}

window.addEventListener("DOMContentLoaded", async () => {
  $("key").value = sessionStorage.getItem("agentrig-key") || "";
  $("key").addEventListener("change", () => {
    sessionStorage.setItem("agentrig-key", $("key").value);
    start();
  });
  $("new-session").addEventListener("click", () => newConversation(""));
  // a conversation belongs to one agent: choosing another starts a new one
  $("agent").addEventListener("change", () => {
    if (state.previous) newConversation("New conversation with " + $("agent").value + ".");
  });
  // Enter sends; Shift+Enter (or an input method composing text) makes a new line
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("prompt").value.trim();
    if (!text || state.busy) return;
    $("prompt").value = "";
    send(text);
  });
  start();
});

function newConversation(message) {
  state.previous = null; state.sessionId = null; $("transcript").textContent = "";
  status(message);
}

async function start() {
  try {
    await loadModels();
    await loadSessions();
    document.body.dataset.ready = "yes";
    status("");
  } catch (e) {
    status(e.message);
  }
}
