"""``jupyter terax mcp``: Terax's tools for external agents over the Model Context Protocol.

A thin client of the user's running Terax server (``terax_jupyter.client``): the server's
security layer and approvals apply to every call, and this process touches nothing itself.
"""
