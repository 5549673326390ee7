"""Tools for working on Terax itself (documentation generators); nothing the server loads."""
