/**
 * YARA rules through YARA-X (npm @litko/yara-x, whose native binary ships in the npm package).
 * Rules: the bundled set under rules/yara/ plus every *.yar / *.yara file in the operator's
 * YARA_RULES_DIR (read by config.ts). Compiled once per directory set and cached for the life of the process.
 * Rule meta drives the finding: name, description, severity, category, confidence.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { compile } from '@litko/yara-x';
import type { RuleMatch, YaraX } from '@litko/yara-x';
import { SEVERITIES, type Engine, type EngineContext, type EngineOutput, type Finding, type ScanSubject, type Severity } from '../types';

export const BUNDLED_RULES_DIR = path.resolve(__dirname, '../../../rules/yara');

export interface YaraOptions {
  /** Directories of rule files; default: the bundled rules (services.ts adds YARA_RULES_DIR from config.ts). */
  ruleDirs?: string[];
}

interface CompiledRules { sets: YaraX[]; files: string[] }
const cache = new Map<string, CompiledRules>();

function ruleFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...ruleFiles(full));
    else if (/\.(yar|yara)$/i.test(entry)) out.push(full);
  }
  return out;
}

/**
 * Compiles (once) the rule files of each directory into one rule set per directory, so an
 * operator rule may reuse a bundled rule's name. A compile error names the directory.
 */
export function loadRules(dirs: string[]): CompiledRules {
  const key = dirs.map((d) => path.resolve(d)).join('\0');
  const hit = cache.get(key);
  if (hit) return hit;
  const sets: YaraX[] = [];
  const files: string[] = [];
  for (const dir of dirs) {
    const dirFiles = ruleFiles(dir);
    if (!dirFiles.length) continue;
    const source = dirFiles.map((f) => `// file: ${f}\n${readFileSync(f, 'utf8')}`).join('\n');
    try {
      sets.push(compile(source));
    } catch (err) {
      throw new Error(`YARA rules under ${dir} failed to compile: ${err instanceof Error ? err.message : String(err)}`);
    }
    files.push(...dirFiles);
  }
  const compiled = { sets, files };
  cache.set(key, compiled);
  return compiled;
}

function metaString(meta: object, key: string): string | undefined {
  const v = (meta as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

export function matchToFinding(m: RuleMatch): Finding {
  const rule = m.ruleIdentifier;
  const sev = metaString(m.meta, 'severity');
  const conf = Number(metaString(m.meta, 'confidence') ?? 0.7);
  const first = m.matches[0];
  return {
    id: `yara.${rule}`,
    name: metaString(m.meta, 'name') ?? rule,
    severity: (SEVERITIES as readonly string[]).includes(sev ?? '') ? (sev as Severity) : 'medium',
    confidence: Number.isFinite(conf) ? conf : 0.7,
    description: metaString(m.meta, 'description') ?? `YARA rule ${rule} matched.`,
    ...(metaString(m.meta, 'category') ? { category: metaString(m.meta, 'category') } : {}),
    ...(first ? { excerpt: first.data.slice(0, 200) } : {}),
  };
}

export function createYaraEngine(options: YaraOptions = {}): Engine {
  // Compiled now rather than by the first scan: compiling blocks the event loop for a few hundred
  // milliseconds, which every request in flight would wait out. A set that does not compile is
  // reported by each scan (loadRules throws again there), not here.
  try {
    loadRules(options.ruleDirs ?? [BUNDLED_RULES_DIR]);
  } catch {
    // reported per scan
  }
  return {
    name: 'yara',
    async scan(subject: ScanSubject, _ctx: EngineContext): Promise<EngineOutput> {
      const { sets, files } = loadRules(options.ruleDirs ?? [BUNDLED_RULES_DIR]);
      const matches: RuleMatch[] = [];
      for (const set of sets) matches.push(...(await set.scanAsync(subject.content)));
      return {
        findings: matches.map(matchToFinding),
        report: { yara: { rulesFiles: files.length, matched: matches.map((m) => m.ruleIdentifier) } },
      };
    },
  };
}
