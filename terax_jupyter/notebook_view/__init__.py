"""A notebook as text for a model, read only: cells with stable ids and source hashes
(``cells``), the outline and the budgeted reader (``views``), outputs as text (``render``) and
the untrusted-data envelope (``untrusted``).

Pure: it reads no file and knows no server. The built-in agent's notebook tools and the MCP
server's both use it, each with the text its security layer read and its own redactor.
"""
