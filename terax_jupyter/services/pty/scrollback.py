"""The last few MiB of a session's output, addressed by absolute stream offsets."""

from __future__ import annotations

from collections import deque


class Scrollback:
    """A ring of output chunks. Offsets count every byte the session ever produced."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.start = 0  # absolute offset of the first byte still held
        self.end = 0  # absolute offset just after the last byte

    def append(self, data: bytes) -> None:
        if not data:
            return
        self._chunks.append(data)
        self._size += len(data)
        self.end += len(data)
        while self._size > self.capacity and self._chunks:
            excess = self._size - self.capacity
            head = self._chunks[0]
            if len(head) <= excess:
                self._chunks.popleft()
                self._size -= len(head)
                self.start += len(head)
            else:
                self._chunks[0] = head[excess:]
                self._size -= excess
                self.start += excess

    def read(self, start: int | None = None, end: int | None = None) -> tuple[bytes, int]:
        """Bytes in [start, end) that are still held, and the offset they begin at."""
        begin = self.start if start is None else max(start, self.start)
        stop = self.end if end is None else min(end, self.end)
        if stop <= begin:
            return b"", begin
        data = b"".join(self._chunks)
        if len(self._chunks) > 1:
            self._chunks = deque([data])
        return data[begin - self.start : stop - self.start], begin

    def slice(self, start: int, limit: int) -> tuple[bytes, int]:
        """Up to ``limit`` bytes from ``start`` on (or from the first byte still held), and
        the offset they begin at; unlike ``read``, the ring is not joined into one copy."""
        begin = max(start, self.start)
        if begin >= self.end or limit <= 0:
            return b"", begin
        pieces: list[bytes] = []
        position, wanted = self.start, limit
        for chunk in self._chunks:
            chunk_end = position + len(chunk)
            if chunk_end > begin:
                offset = max(begin - position, 0)
                piece = chunk[offset : offset + wanted]
                pieces.append(piece)
                wanted -= len(piece)
                if wanted <= 0:
                    break
            position = chunk_end
        return (pieces[0] if len(pieces) == 1 else b"".join(pieces)), begin

    def __len__(self) -> int:
        return self._size
