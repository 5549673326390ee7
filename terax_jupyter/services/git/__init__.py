"""Source control: repository discovery, status, diffs, hunk staging, commits, branches, history."""
