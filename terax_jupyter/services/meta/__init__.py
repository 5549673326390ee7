"""What the server is: version, settings a client needs, and the OpenAPI document."""
