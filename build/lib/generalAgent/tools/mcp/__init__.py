"""MCP servers as tools: configuration (config.py), names (naming.py), one server's connection
(server.py), the tools the model sees (tool.py) and the servers of a process (manager.py).

See docs/mcp.md for what a user writes and sees.
"""
