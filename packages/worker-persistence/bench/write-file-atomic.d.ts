// write-file-atomic ships no types; the benchmark only needs this call.
declare module "write-file-atomic" {
  export default function writeFileAtomic(
    filename: string,
    data: string | Buffer,
    options?: { fsync?: boolean; mode?: number; encoding?: BufferEncoding },
  ): Promise<void>;
}
