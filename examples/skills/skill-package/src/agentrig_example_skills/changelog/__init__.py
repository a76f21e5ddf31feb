"""The ``changelog`` skill: this folder is the skill (SKILL.md and its resources)."""
