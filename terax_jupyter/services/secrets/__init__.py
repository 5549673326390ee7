"""Keys: provider API keys kept on the server (keychain or a 0600 file), never sent out."""
