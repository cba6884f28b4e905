"""Importers: read what harnesses already write (Inspect AI, AgentDojo, InjecAgent, garak, MCP,
Agent Skills, OpenAI/Anthropic chats) as episode/1.1, one module per format. The contract of a
format module is in `_contract.py`."""
