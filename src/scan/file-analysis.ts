/**
 * What the engines derive from one file's bytes, computed once per file and shared: the parsed
 * PE or ELF structure, the printable strings and a ZIP's entry listing (taken over from the type
 * identification, which reads it to tell a jar, apk or Office document from a plain zip). analyze() builds one FileAnalysis per file (the
 * submitted object and each archive member) and hands it to every engine on the subject; each
 * fact is computed on first use and kept. On the engine pool (pool.ts) the facts of a PE or ELF
 * are computed once on a thread and handed to every pooled engine that reads them.
 */
import { parseElf, type ElfInfo } from './engines/elf';
import { parsePe, type PeInfo } from './engines/pe';
import { scanStrings, STRING_READERS, stringsFor, type StringReader, type StringTable } from './static/strings';
import type { FileType } from './types';
import { listZipEntries, type ZipListing } from './zip';

/** The computed facts; plain data, so they survive a structured clone to a pool thread. */
export interface FileFacts {
  pe?: PeInfo | null;
  elf?: ElfInfo | null;
  strings?: StringTable;
  zip?: ZipListing | null;
}

/** Formats whose parse and strings several engines read (static_pe/static_elf, behavior, ml). */
export const SHARED_PARSE_TYPES: ReadonlySet<FileType> = new Set<FileType>(['pe', 'elf']);

const READERS = Object.keys(STRING_READERS) as StringReader[];

export class FileAnalysis {
  constructor(
    readonly content: Buffer,
    private readonly facts: FileFacts = {},
  ) {}

  /** The parsed PE, null when the content is not one. */
  pe(): PeInfo | null {
    if (this.facts.pe === undefined) this.facts.pe = parsePe(this.content);
    return this.facts.pe;
  }

  /** The parsed ELF, null when the content is not one. */
  elf(): ElfInfo | null {
    if (this.facts.elf === undefined) this.facts.elf = parseElf(this.content);
    return this.facts.elf;
  }

  /** The printable strings under `reader`'s limits; one pass serves every reader. */
  strings(reader: StringReader): string[] {
    this.facts.strings ??= scanStrings(this.content, READERS.map((r) => STRING_READERS[r]));
    return stringsFor(this.facts.strings, READERS.indexOf(reader));
  }

  /** The ZIP entry listing (null when unreadable). */
  async zipListing(): Promise<ZipListing | null> {
    if (this.facts.zip === undefined) this.facts.zip = await listZipEntries(this.content);
    return this.facts.zip;
  }

  /** The facts computed so far (handed to pool threads with the content). */
  known(): FileFacts {
    return this.facts;
  }

  /** Computes every fact the binary engines read and returns them (for the pool threads). */
  prepare(): FileFacts {
    if (!this.pe()) this.elf();
    this.strings(READERS[0]);
    return this.facts;
  }
}
