"""Terminal service: shells on PTYs with flow control, shell integration and command blocks."""
