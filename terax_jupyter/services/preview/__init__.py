"""Web preview: dev servers found in terminals, and the proxy that shows them in Lab."""
