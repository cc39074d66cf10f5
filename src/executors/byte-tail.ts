/** Keeps the last `limit` bytes of a stream without holding the rest. */
export class ByteTail {
  private chunks: Buffer[] = [];
  private held = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.limit === 0) return;
    this.chunks.push(chunk);
    this.held += chunk.length;
    while (this.chunks.length > 1 && this.held - this.chunks[0]!.length >= this.limit) {
      this.held -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    if (all.length <= this.limit && this.held === this.total) return all.toString('utf8');
    let start = all.length - this.limit;
    // The cut may fall inside a character: skip its utf8 continuation bytes (10xxxxxx), at most 3.
    const limit = Math.min(all.length, start + 3);
    while (start < limit && (all[start]! & 0xc0) === 0x80) start++;
    return all.subarray(start).toString('utf8');
  }
}
