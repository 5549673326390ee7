"""File-system service: read, write, list, search, grep, glob and watch inside workspace roots."""
