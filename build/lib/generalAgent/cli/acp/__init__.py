"""`generalagent acp`: the agent as an Agent Client Protocol server for editors (Zed, JetBrains).

server.py speaks the protocol and keeps the editor's sessions; turn.py runs one turn as
the chat does; view.py turns what a turn reports into session updates and permission
requests; editor.py reads, writes and runs commands through the editor when it offers
to; modes.py is the session's approval mode; mcp_servers.py starts the MCP servers an
editor passes with a session.
"""
