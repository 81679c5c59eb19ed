/**
 * Where the CVE dataset is read from: the operator's refreshed copy in DATA_DIR/cve/cves.json
 * when `npm run cli -- cve refresh` has written one, else the dataset bundled in datasets/cve/.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { CVE_DATASET_PATH } from './engines/cve';

export function operatorCveDatasetPath(config: Config, create = false): string {
  const file = path.join(config.dataDir, 'cve', 'cves.json');
  if (create && !existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    copyFileSync(CVE_DATASET_PATH, file);
  }
  return file;
}

/** The YARA rule directories: the bundled rules, then the operator's YARA_RULES_DIR. */
export function yaraRuleDirs(config: Config): string[] {
  return [path.join(config.rootDir, 'rules', 'yara'), ...(config.yaraRulesDir ? [config.yaraRulesDir] : [])];
}

export function cveDatasetPath(config: Config): string {
  const operator = operatorCveDatasetPath(config);
  return existsSync(operator) ? operator : CVE_DATASET_PATH;
}
