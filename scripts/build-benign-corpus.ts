/**
 * Builds the benign script corpus (issue 30): real software from the package registries this
 * machine reaches (Debian, npm, PyPI), its script files picked out by extension, shebang and
 * place, split by package into train / validation / heldout.
 *
 *   nice -n 15 npx tsx scripts/build-benign-corpus.ts [--cache DIR] [--only-manifest]
 *
 * Downloads (`apt-get download`, `npm pack`, `pip download`) go to `<cache>/{deb,npm,pypi}`
 * (default `.tools/data/benign`, ignored by git) and are kept, so a second run
 * downloads nothing; each package is unpacked into a throwaway folder under /tmp and removed.
 * Script texts are stored by SHA-256 under `<cache>/files/` and never committed; the committed
 * manifest `datasets/benign/manifest.jsonl.gz` says, per package, its ecosystem, version,
 * licence line, split and files (path, sha256, language); `datasets/benign/summary.json` the
 * counts. The bench (`npm run bench -- scan-fp --scripts`) and the script-model training read
 * the texts back through the manifest.
 *
 * Splits are by package: a package (an Ansible collection counts as one, since each is released
 * on its own) lies wholly on one side, assigned in a fixed hash order to the side furthest below
 * its share of files in the package's main language. A text found in two packages is kept only
 * in the first (in sorted order), so no text is on two sides.
 *
 *   nice -n 15 npx tsx scripts/build-benign-corpus.ts --fresh [--cache DIR]
 *
 * builds the fresh split instead (evaluation only, `datasets/benign/fresh.jsonl.gz` and
 * `fresh-summary.json`; the main manifest is read, never written): packages none of whose names
 * (nor upstream names, see upstreamKey) is in the main manifest or the main build's lists, chosen
 * by the fixed rule of freshDebianList and FRESH_RULES.fresh, and no text whose SHA-256 the main
 * manifest holds.
 *
 *   nice -n 15 npx tsx scripts/build-benign-corpus.ts --fresh2 [--cache DIR]
 *
 * builds the second fresh split (`fresh2.jsonl.gz`, `fresh2-summary.json`) by FRESH_RULES.fresh2:
 * nothing shared with the main corpus nor with the fresh split (packages, picks, Debian source
 * packages, texts). Each `--freshN` reads the earlier manifests and writes only its own.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { arg } from './build-detection-data';

const ROOT = path.join(__dirname, '..');
export const BENIGN_MANIFEST = path.join(ROOT, 'datasets', 'benign', 'manifest.jsonl.gz');
const SUMMARY = path.join(ROOT, 'datasets', 'benign', 'summary.json');
/** The evaluation-only splits, each never looked at while tuning; a later one shares nothing with the earlier ones. */
export const FRESH_SPLITS = ['fresh', 'fresh2'] as const;
export type FreshSplit = (typeof FRESH_SPLITS)[number];
export const freshManifest = (split: FreshSplit): string => path.join(ROOT, 'datasets', 'benign', `${split}.jsonl.gz`);
const freshSummary = (split: FreshSplit): string => path.join(ROOT, 'datasets', 'benign', `${split}-summary.json`);
export const FRESH_MANIFEST = freshManifest('fresh');
/** Beside the detection builder's data, ignored by git (about 1.8 GB once built). */
export const DEFAULT_CACHE = path.join(ROOT, '.tools', 'data', 'benign');

export type Language = 'php' | 'perl' | 'shell' | 'python' | 'javascript' | 'powershell' | 'batch' | 'vbscript' | 'jscript';
export type BenignSplit = 'train' | 'validation' | 'heldout';
/** `fresh`, `fresh2`: the separate evaluation-only manifests, never looked at while tuning. */
export type CorpusSplit = BenignSplit | FreshSplit;
const CORPUS_SPLITS: readonly CorpusSplit[] = ['train', 'validation', 'heldout', ...FRESH_SPLITS];

/** A split's name from the command line, or an error naming the ones there are. */
export function corpusSplit(name: string): CorpusSplit {
  const split = CORPUS_SPLITS.find((s) => s === name);
  if (!split) throw new Error(`--split ${name}: expected one of ${CORPUS_SPLITS.join(', ')}`);
  return split;
}

/** The manifest a split's packages are in. */
const isFreshSplit = (split: string): split is FreshSplit => FRESH_SPLITS.some((s) => s === split);
export const manifestOf = (split: CorpusSplit): string => (isFreshSplit(split) ? freshManifest(split) : BENIGN_MANIFEST);
export interface BenignPackage<S extends CorpusSplit = CorpusSplit> { ecosystem: 'debian' | 'npm' | 'pypi'; name: string; version: string; licence: string; split: S; files: Array<[path: string, sha256: string, language: Language]> }

/** Shares of files per split (by language, package by package). */
const SHARES: Record<BenignSplit, number> = { train: 0.5, validation: 0.2, heldout: 0.3 };
/** Files larger than this are left out (generated bundles and data tables would dominate the sweep time). */
const MAX_FILE = 1024 * 1024;

/** Debian packages read whole: the PHP applications and libraries, Perl, shell and Python the issue names. */
const DEBIAN_NAMED = [
  // PHP
  'wordpress', 'phpmyadmin', 'libphp-phpmailer', 'mediawiki', 'roundcube-core', 'dokuwiki', 'tt-rss', 'composer', 'php-phpseclib3', 'php-twig', 'php-monolog', 'php-guzzlehttp-guzzle',
  // Perl
  'perl-modules-5.36', 'libmojolicious-perl', 'libbio-perl-perl', 'spamassassin', 'munin-node', 'munin-plugins-core', 'request-tracker5', 'lintian', 'needrestart', 'devscripts', 'debhelper', 'libwww-perl', 'libio-socket-ssl-perl', 'libnet-dns-perl', 'libpoe-perl', 'libanyevent-perl', 'libnet-openssh-perl', 'libexpect-perl', 'libnet-telnet-perl',
  // Shell
  'bash-completion', 'zsh-common', 'initramfs-tools-core', 'initramfs-tools', 'live-build', 'etckeeper', 'rkhunter', 'lynis', 'grub-common', 'ifupdown', 'isc-dhcp-client', 'ucf', 'debconf', 'autoconf', 'libtool', 'automake', 'shunit2', 'bats', 'dracut-core', 'firewalld', 'ufw', 'fail2ban', 'monitoring-plugins-standard', 'monitoring-plugins-contrib', 'openvpn', 'sysvinit-utils', 'init-system-helpers', 'apt-listchanges', 'unattended-upgrades', 'molly-guard', 'debian-goodies', 'open-iscsi', 'nfs-common', 'postfix', 'cron', 'logrotate', 'rsyslog', 'openssh-server', 'openssh-client', 'docker.io', 'lxc', 'zfs-initramfs', 'mdadm', 'lvm2', 'cryptsetup-initramfs', 'kmod', 'udev', 'procps', 'systemd', 'apparmor', 'ca-certificates', 'dpkg', 'apt', 'xdg-utils', 'bash-builtins',
  // Python
  'libpython3.11-stdlib', 'python3-django', 'python3-twisted', 'python3-paramiko', 'python3-requests', 'python3-urllib3', 'python3-setuptools', 'python3-pip', 'python3-sympy', 'python3-pygments', 'python3-virtualenv', 'python3-scapy', 'ansible', 'ansible-core', 'cloud-init', 'python3-sqlalchemy', 'python3-jinja2', 'python3-sphinx', 'python3-docutils', 'certbot', 'python3-certbot', 'python3-pexpect', 'mercurial-common', 'meson', 'python3-babel', 'python3-matplotlib', 'python3-numpy', 'python3-boto3', 'python3-botocore', 'python3-pywinrm', 'python3-ldap3', 'python3-dnspython',
  // JavaScript
  'node-typescript', 'node-babel7', 'node-lodash', 'npm', 'node-gyp', 'libjs-jquery', 'libjs-jquery-ui', 'libjs-bootstrap4', 'libjs-d3', 'node-rollup', 'node-undici', 'node-express', 'node-mocha', 'node-yargs', 'node-async', 'node-acorn', 'libjs-codemirror',
];

/** Families sampled by a fixed hash of the name (many small packages: many independent units for the split). */
const DEBIAN_SAMPLED: Array<{ pattern: RegExp; take: number }> = [
  { pattern: /^php-(?:symfony|illuminate|doctrine|horde|league|sabre|guzzle|nette|laminas|zend|twig|monolog|phpunit|sebastian|phpdocumentor|psr|react|amp|composer|egulias|swiftmailer|tcpdf|phpmailer)/, take: 260 },
  { pattern: /^lib[a-z0-9-]+-perl$/, take: 420 },
  { pattern: /^node-[a-z0-9-]+$/, take: 320 },
  { pattern: /^python3-[a-z0-9-]+$/, take: 320 },
];

/** npm packages (pinned): application and library JavaScript, and the PowerShell, batch and WSH files packages ship. */
const NPM = [
  'npm@12.2.1', 'typescript@7.0.2', 'lodash@4.18.1', 'react-dom@19.3.1', 'webpack@5.113.0', 'express@5.3.0', 'axios@1.21.1', 'eslint@10.15.0', 'prettier@3.10.1', 'rxjs@7.8.2',
  'moment@2.31.0', 'chart.js@4.6.1', 'node-gyp@13.1.0', 'node-windows@0.1.14', 'regedit@5.1.4', 'create-desktop-shortcuts@1.12.0', 'pm2@7.0.4', 'yarn@1.22.22', 'corepack@0.36.0',
  'npm-windows-upgrade@6.0.1', 'windows-build-tools@5.2.2', 'jquery@4.0.0', 'bootstrap@5.3.9', 'vue@3.5.45', 'd3@7.9.2', 'socket.io@4.8.4', 'ws@8.23.0', 'mongoose@9.12.1',
  'sequelize@6.37.8', 'puppeteer-core@25.16.0', 'playwright-core@1.65.1', 'electron-builder@26.17.0', 'cordova@13.0.0', 'nodemon@3.1.14', 'cross-env@10.1.0', 'shelljs@0.10.0',
  'execa@10.2.1', 'open@11.0.4', 'three@0.187.0', '@babel/core@8.1.3', '@angular/core@22.2.6', 'vite@8.3.8',
];

/** PyPI packages (pinned); `win:` ones are Windows wheels (they hold the .bat/.ps1/.vbs). */
const PYPI = [
  'virtualenv==21.15.11', 'nodeenv==1.12.0', 'sphinx==9.0.4', 'awscli==1.46.3', 'pypsrp==0.9.1', 'pywinrm==0.5.0', 'invoke==3.0.3', 'fabric==3.2.3', 'scons==4.11.1',
  'meson==1.12.1', 'pyinstaller==6.22.3', 'cookiecutter==2.7.1', 'tox==4.67.15', 'nox==2026.10.20', 'pre-commit==4.7.0', 'poetry==2.5.1', 'pipenv==2026.10.3', 'salt==3008.5',
  'jupyterlab==4.6.6', 'ipython==9.18.1', 'django==5.2.19', 'flask==3.1.3', 'paramiko==5.1.0', 'wmi==1.5.1', 'platformio==6.2.0', 'west==1.5.0', 'black==26.10.1',
  'win:pywin32==311', 'win:pywinauto==0.6.9',
];

/** A family of Debian packages: names matching `pattern` (and, where given, whose Section or Depends/Pre-Depends match), the first `take` in the salted hash order. */
interface Family { pattern: RegExp; take: number; section?: RegExp; depends?: RegExp }

/**
 * The fresh split's rule, fixed before any result was seen: the same four Debian families, after
 * excluding the main corpus, ordered by a different salt (`fresh:`), this many each...
 */
const FRESH_SAMPLED: Family[] = [
  { pattern: /^php-[a-z0-9-]+$/, take: 200 },
  { pattern: /^lib[a-z0-9-]+-perl$/, take: 220 },
  { pattern: /^node-[a-z0-9-]+$/, take: 160 },
  { pattern: /^python3-[a-z0-9-]+$/, take: 120 },
];

/** ...these named Debian packages (PHP applications, and shell from init, boot, audit, backup and cluster tools)... */
const FRESH_DEBIAN_NAMED = [
  // PHP
  'cacti', 'zabbix-frontend-php', 'icingaweb2', 'adminer', 'postfixadmin', 'roundcube-plugins', 'davical', 'libawl-php', 'phpsysinfo', 'smarty4', 'smarty3', 'simplesamlphp', 'fusiondirectory', 'gosa',
  // Shell
  'git', 'git-extras', 'git-flow', 'debootstrap', 'mmdebstrap', 'pbuilder', 'quilt', 'live-boot', 'live-config', 'live-tools', 'resource-agents', 'tiger', 'chkrootkit', 'aide-common', 'logcheck',
  'backupninja', 'byobu', 'neofetch', 'screenfetch', 'tlp', 'laptop-mode-tools', 'pm-utils', 'acpi-support', 'ppp', 'wpasupplicant', 'os-prober', 'dkms', 'console-setup', 'keyboard-configuration',
  'util-linux', 'x11-common', 'xinit', 'shorewall', 'shorewall-core', 'arno-iptables-firewall', 'zsh-syntax-highlighting', 'zsh-autosuggestions', 'zsh-theme-powerlevel9k', 'vcsh', 'bash-doc',
  'ltsp', 'kdump-tools', 'zram-tools', 'apache2', 'mariadb-server', 'postgresql-common', 'exim4-config', 'exim4-base', 'cups-filters', 'openrc', 'gettext-base', 'linux-base', 'resolvconf',
  'openresolv', 'wireguard-tools', 'xen-utils-common', 'openvswitch-switch', 'cdbs', 'gnulib', 'dh-make', 'kernel-wedge', 'busybox', 'sysstat', 'smartmontools', 'fai-client', 'fai-server',
  'fai-setup-storage', 'grml-debootstrap', 'autopkgtest', 'piuparts', 'munin-plugins-extra', 'openstack-pkg-tools', 'bats-support', 'bats-assert', 'bats-file', 'sharness', 'docbook-utils',
  'xmlto', 'mc-data', 'bridge-utils', 'ifenslave', 'open-vm-tools', 'sendmail-base', 'check-mk-agent', 'monit', 'apt-file', 'bash-completion-extras', 'tmux-plugin-manager',
];

/** ...and a few pinned PyPI packages that ship batch and PowerShell files (Windows virtualenv and build helpers). */
const FRESH_PYPI = ['pyenv-win==3.1.1', 'virtualenvwrapper-win==1.2.7', 'nuitka==4.3.3', 'conan==2.34.0'];

/**
 * An evaluation-only split's rule, written down before anything of it is downloaded: its salt, its
 * families, named packages and pinned PyPI packages; the earlier fresh splits it shares nothing
 * with (their packages, picks and texts); whether a Debian package built from the same source
 * package as an excluded one is excluded too; and at most how many files one package gives
 * (the first in the salted hash order of their SHA-256), so that no generated tree dominates.
 */
export interface FreshRule { salt: string; sampled: Family[]; named: string[]; pypi: string[]; after: FreshSplit[]; bySource: boolean; maxFiles: number }

/**
 * fresh2: every family sampled, none named by hand. The four language families of the fresh split
 * under the salt `fresh2:` (the `php-*` one is nearly exhausted by then, so PHP applications too:
 * packages that depend on PHP), and shell where Debian keeps it: packages that ship an init script
 * (they depend on lsb-base or sysvinit-utils), the admin, net, utils and shells sections (maintainer
 * scripts, /etc, /usr/share/<pkg>/ helpers), `-tools` packages and installed test suites (`-tests`).
 */
/** Any Debian package name (the family is then its Section or Depends). */
const ANY = /^[a-z0-9][a-z0-9.+-]*$/;
const FRESH2_SAMPLED: Family[] = [
  { pattern: /^php-[a-z0-9-]+$/, take: 260 },
  { pattern: ANY, depends: /(?:^|[\s,|])(?:php[\d.]*|php[\d.]*-cli|php-common|libapache2-mod-php[\d.]*)(?:[\s,(]|$)/, take: 80 },
  { pattern: /^lib[a-z0-9-]+-perl$/, take: 300 },
  { pattern: /^node-[a-z0-9-]+$/, take: 240 },
  { pattern: /^python3-[a-z0-9-]+$/, take: 240 },
  { pattern: ANY, depends: /(?:^|[\s,|])(?:lsb-base|sysvinit-utils)\b/, take: 150 },
  { pattern: ANY, section: /^shells$/, take: 40 },
  { pattern: ANY, section: /^admin$/, take: 150 },
  { pattern: ANY, section: /^net$/, take: 80 },
  { pattern: ANY, section: /^utils$/, take: 80 },
  { pattern: /-tools$/, take: 80 },
  { pattern: /-tests?$/, take: 40 },
];

export const FRESH_RULES: Record<FreshSplit, FreshRule> = {
  fresh: { salt: 'fresh:', sampled: FRESH_SAMPLED, named: FRESH_DEBIAN_NAMED, pypi: FRESH_PYPI, after: [], bySource: false, maxFiles: Infinity },
  fresh2: { salt: 'fresh2:', sampled: FRESH2_SAMPLED, named: [], pypi: [], after: ['fresh'], bySource: true, maxFiles: 300 },
};

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const run = (cmd: string, args: string[], cwd?: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });

const EXT: Record<string, Language> = {
  php: 'php', phtml: 'php', inc: 'php', pl: 'perl', pm: 'perl', t: 'perl', cgi: 'perl', sh: 'shell', bash: 'shell', zsh: 'shell', ksh: 'shell', py: 'python', pyw: 'python',
  js: 'javascript', mjs: 'javascript', cjs: 'javascript', ps1: 'powershell', psm1: 'powershell', psd1: 'powershell', bat: 'batch', cmd: 'batch', vbs: 'vbscript', vbe: 'vbscript', wsf: 'vbscript', jse: 'jscript',
};

/** Language of a file from its place, extension or shebang; undefined when it is not a script. */
export function scriptLanguage(rel: string, head: Buffer): Language | undefined {
  if (head.subarray(0, 8192).includes(0)) return undefined;
  const base = path.basename(rel);
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  // .inc and .t and .cgi are scripts only with the matching content.
  if (ext === 'inc' && !head.includes('<?php')) return undefined;
  // Own keys only: a file named `x.constructor` must not read Object's prototype.
  if (Object.hasOwn(EXT, ext) && ext !== 'inc' && ext !== 't' && ext !== 'cgi') return EXT[ext];
  const first = head.subarray(0, 200).toString('latin1').split('\n')[0];
  if (first.startsWith('#!')) {
    if (/\b(?:ba|da|z|k|c|tc)?sh\b/.test(first) && !/python|perl|node|php|ruby/.test(first)) return 'shell';
    if (/perl/.test(first)) return 'perl';
    if (/python/.test(first)) return 'python';
    if (/\bnode\b/.test(first)) return 'javascript';
    if (/\bphp\b/.test(first)) return 'php';
    return undefined;
  }
  if (ext === 'inc') return 'php';
  if (ext === 't' || ext === 'cgi') return head.includes('use ') ? 'perl' : undefined;
  // Shell without a shebang: completions, zsh functions, Debian maintainer scripts.
  if (/(?:^|\/)(?:bash-completion\/completions|zsh\/(?:[\d.]+\/)?functions|zsh\/vendor-completions)\//.test(rel) && !ext) return 'shell';
  if (/^DEBIAN\/(?:preinst|postinst|prerm|postrm|config)$/.test(rel)) return 'shell';
  return undefined;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = path.join(dir, e);
    const st = lstatSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (st.isFile() && st.size > 0 && st.size <= MAX_FILE) out.push(p);
  }
  return out;
}

export interface Unit { ecosystem: BenignPackage['ecosystem']; name: string; version: string; licence: string; files: Array<{ rel: string; sha: string; lang: Language; content: Buffer }> }

/** Scripts of an unpacked package; Ansible's bundle is cut into its collections. */
function unitsOf(root: string, ecosystem: Unit['ecosystem'], name: string, version: string, licence: string): Unit[] {
  const units = new Map<string, Unit>();
  for (const p of walk(root)) {
    const rel = path.relative(root, p);
    const content = readFileSync(p);
    const lang = scriptLanguage(rel, content.subarray(0, 8192));
    if (!lang) continue;
    const coll = /ansible_collections\/([^/]+)\/([^/]+)\//.exec(rel);
    const unitName = coll && name === 'ansible' ? `ansible:${coll[1]}.${coll[2]}` : name;
    const u = units.get(unitName) ?? { ecosystem, name: unitName, version, licence, files: [] };
    u.files.push({ rel, sha: sha256(content), lang, content });
    units.set(unitName, u);
  }
  return [...units.values()];
}

function debianLicence(root: string, pkg: string): string {
  const f = path.join(root, 'usr', 'share', 'doc', pkg, 'copyright');
  if (!existsSync(f)) return 'unknown';
  const m = /^License:\s*(\S[^\n]*)/m.exec(readFileSync(f, 'utf8'));
  return m ? m[1].trim().slice(0, 80) : 'see copyright';
}

const debianNames = (): string[] => run('apt-cache', ['pkgnames']).split('\n').filter(Boolean).sort();

function debianList(all = debianNames()): string[] {
  const real = new Set(all);
  const picked = new Set(DEBIAN_NAMED.filter((p) => real.has(p)));
  for (const family of DEBIAN_SAMPLED) for (const p of sampleFamily(all, family, 'benign:')) picked.add(p);
  return [...picked].sort();
}

/** A Debian package's fields the family rules read (from `apt-cache dumpavail`: metadata only, never contents). */
export interface DebianMeta { section: string; source: string; depends: string }

/** Every Debian package's Section, Source and Depends/Pre-Depends (the first record of a name wins). */
function debianMeta(): Map<string, DebianMeta> {
  const meta = new Map<string, DebianMeta>();
  for (const rec of run('apt-cache', ['dumpavail']).split('\n\n')) {
    const field = (f: string): string => new RegExp(`^${f}: *(.*)$`, 'm').exec(rec)?.[1] ?? '';
    const name = field('Package');
    if (!name || meta.has(name)) continue;
    meta.set(name, { section: field('Section').replace(/^.*\//, ''), source: field('Source').split(' ')[0] || name, depends: `${field('Pre-Depends')}, ${field('Depends')}` });
  }
  return meta;
}

/** One family's pick: its members (never -dbg, -dev or -doc), the first `take` in the order of sha256(salt + name). */
function sampleFamily(all: string[], { pattern, take, section, depends }: Family, salt: string, meta = new Map<string, DebianMeta>()): string[] {
  const inFamily = (p: string): boolean => {
    if (!pattern.test(p) || /-(?:dbg|dbgsym|dev|doc)$/.test(p)) return false;
    const m = meta.get(p);
    return (!section || (m !== undefined && section.test(m.section))) && (!depends || (m !== undefined && depends.test(m.depends)));
  };
  return all.filter(inFamily).sort((a, b) => sha256(`${salt}${a}`).localeCompare(sha256(`${salt}${b}`))).slice(0, take);
}

/**
 * A package's upstream name, so that python3-requests, requests and node-requests, or
 * libwww-perl and www, count as one package for the fresh split's exclusion.
 */
export function upstreamKey(name: string): string {
  return name.toLowerCase().replace(/^ansible:/, '').replace(/^(?:node|python3?|php|libjs)-/, '').replace(/^lib(.+)-perl$/, '$1').replace(/[_.]/g, '-');
}

/** What a fresh split must not share: package names and upstream names (and, by its rule, Debian source packages), and texts. */
export interface Exclusion { names: Set<string>; texts: Set<string>; sources?: Map<string, string> }

/**
 * The exclusion made of earlier manifests' packages and every package the earlier builds pick;
 * with `sources` (Debian package to source package), their source packages too.
 */
export function exclusion(earlier: BenignPackage[], picked: string[], sources?: Map<string, string>): Exclusion {
  const pkgNames = [...earlier.map((p) => p.name), ...picked];
  const names = sources ? [...pkgNames, ...pkgNames.flatMap((n) => sources.get(n) ?? [])] : pkgNames;
  return { names: new Set([...names, ...names.map(upstreamKey)]), texts: new Set(earlier.flatMap((p) => p.files.map(([, sha]) => sha))), sources };
}

const isFresh = (name: string, ex: Exclusion): boolean =>
  [name, ex.sources?.get(name)].every((n) => n === undefined || (!ex.names.has(n) && !ex.names.has(upstreamKey(n))));

/** The fresh Debian packages of a rule: the named ones and the salted family samples, none of them excluded. */
export function freshDebianList(all: string[], ex: Exclusion, rule: FreshRule = FRESH_RULES.fresh, meta = new Map<string, DebianMeta>()): string[] {
  const real = new Set(all);
  const picked = new Set(rule.named.filter((p) => real.has(p) && isFresh(p, ex)));
  for (const family of rule.sampled) {
    for (const p of sampleFamily(all.filter((n) => !picked.has(n) && isFresh(n, ex)), family, rule.salt, meta)) picked.add(p);
  }
  return [...picked].sort();
}

/**
 * A fresh manifest from unpacked units: excluded units are left out, then every excluded text,
 * then texts repeated inside the fresh set (first in sorted order keeps it); then at most
 * `rule.maxFiles` per package.
 */
export function freshPackages(units: Unit[], ex: Exclusion, split: FreshSplit, rule: FreshRule = FRESH_RULES[split]): BenignPackage[] {
  const seen = new Set(ex.texts);
  const out: BenignPackage[] = [];
  const order = (sha: string): string => sha256(`${rule.salt}${sha}`);
  for (const u of [...units].sort((a, b) => `${a.ecosystem}:${a.name}`.localeCompare(`${b.ecosystem}:${b.name}`))) {
    if (!isFresh(u.name, ex)) continue;
    const files = u.files.filter((f) => (seen.has(f.sha) ? false : (seen.add(f.sha), true)));
    const kept = files.length > rule.maxFiles ? new Set(files.map((f) => f.sha).sort((a, b) => order(a).localeCompare(order(b))).slice(0, rule.maxFiles)) : undefined;
    const capped = kept ? files.filter((f) => kept.has(f.sha)) : files;
    if (capped.length) out.push({ ecosystem: u.ecosystem, name: u.name, version: u.version, licence: u.licence, split, files: capped.map((x) => [x.rel, x.sha, x.lang]) });
  }
  return out;
}

function downloadDebian(cache: string, pkgs: string[]): void {
  const dir = path.join(cache, 'deb');
  mkdirSync(dir, { recursive: true });
  const have = new Set(readdirSync(dir).map((f) => f.split('_')[0]));
  const missing = pkgs.filter((p) => !have.has(p));
  for (let i = 0; i < missing.length; i += 40) {
    const batch = missing.slice(i, i + 40);
    try {
      run('apt-get', ['download', ...batch], dir);
    } catch {
      // A virtual package or one without a candidate fails the whole batch: retry one by one.
      for (const p of batch) {
        try { run('apt-get', ['download', p], dir); } catch { console.warn(`apt-get download ${p} failed; skipped`); }
      }
    }
    console.log(`deb: ${Math.min(i + 40, missing.length)} of ${missing.length} downloaded`);
  }
}

function debianUnits(cache: string, pkgs: string[]): Unit[] {
  const dir = path.join(cache, 'deb');
  const wanted = new Set(pkgs);
  const units: Unit[] = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.deb')).sort()) {
    const [name, rawVersion] = f.split('_');
    if (!wanted.has(name)) continue;
    const tmp = mkdtempSync('/tmp/benign-x-');
    try {
      run('dpkg-deb', ['-x', path.join(dir, f), tmp]);
      run('dpkg-deb', ['-e', path.join(dir, f), path.join(tmp, 'DEBIAN')]);
      units.push(...unitsOf(tmp, 'debian', name, decodeURIComponent(rawVersion).replace('%3a', ':'), debianLicence(tmp, name)));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return units;
}

function npmUnits(cache: string, list = NPM): Unit[] {
  const dir = path.join(cache, 'npm');
  mkdirSync(dir, { recursive: true });
  const units: Unit[] = [];
  for (const spec of list) {
    const at = spec.lastIndexOf('@');
    const name = spec.slice(0, at);
    const version = spec.slice(at + 1);
    const tgz = path.join(dir, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`);
    if (!existsSync(tgz)) {
      try { run('npm', ['pack', spec, '--silent', '--pack-destination', dir]); } catch { console.warn(`npm pack ${spec} failed; skipped`); continue; }
    }
    if (!existsSync(tgz)) { console.warn(`npm pack ${spec}: ${tgz} not written; skipped`); continue; }
    const tmp = mkdtempSync('/tmp/benign-x-');
    try {
      run('tar', ['-xzf', tgz, '-C', tmp]);
      const pj = path.join(tmp, 'package', 'package.json');
      const licence = existsSync(pj) ? String((JSON.parse(readFileSync(pj, 'utf8')) as { license?: unknown }).license ?? 'unknown') : 'unknown';
      units.push(...unitsOf(tmp, 'npm', name, version, licence));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return units;
}

function pypiUnits(cache: string, list = PYPI): Unit[] {
  const dir = path.join(cache, 'pypi');
  mkdirSync(dir, { recursive: true });
  const units: Unit[] = [];
  for (const entry of list) {
    const win = entry.startsWith('win:');
    const spec = entry.replace(/^win:/, '');
    const [name, version] = spec.split('==');
    const own = path.join(dir, `${name}-${version}${win ? '-win' : ''}`);
    if (!existsSync(own) || readdirSync(own).length === 0) {
      mkdirSync(own, { recursive: true });
      const extra = win ? ['--platform', 'win_amd64', '--python-version', '3.12', '--only-binary=:all:'] : ['--prefer-binary'];
      try { run('pip', ['download', '--no-deps', '--quiet', ...extra, '-d', own, spec]); } catch { console.warn(`pip download ${spec} failed; skipped`); continue; }
    }
    const archive = readdirSync(own)[0];
    if (!archive) continue;
    const tmp = mkdtempSync('/tmp/benign-x-');
    try {
      const file = path.join(own, archive);
      if (/\.(?:whl|zip)$/.test(archive)) run('unzip', ['-q', '-o', file, '-d', tmp]);
      else run('tar', ['-xf', file, '-C', tmp]);
      const meta = walk(tmp).find((p) => /(?:METADATA|PKG-INFO)$/.test(p));
      const text = meta ? readFileSync(meta, 'utf8') : '';
      const licence = (/^License(?:-Expression)?:\s*(\S[^\n]*)/m.exec(text)?.[1] ?? /^Classifier: License :: (?:OSI Approved :: )?([^\n]+)/m.exec(text)?.[1] ?? 'unknown').trim().slice(0, 80);
      units.push(...unitsOf(tmp, 'pypi', name, version, licence));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return units;
}

/** Dedupe texts across packages (first package in sorted order keeps one), then split by package. */
export function assignSplits(units: Unit[]): Array<BenignPackage<BenignSplit>> {
  const sorted = [...units].sort((a, b) => `${a.ecosystem}:${a.name}`.localeCompare(`${b.ecosystem}:${b.name}`));
  const seen = new Set<string>();
  for (const u of sorted) {
    u.files = u.files.filter((f) => (seen.has(f.sha) ? false : (seen.add(f.sha), true)));
  }
  const kept = sorted.filter((u) => u.files.length > 0);
  const mainLang = (u: Unit): Language => {
    const n = new Map<Language, number>();
    for (const f of u.files) n.set(f.lang, (n.get(f.lang) ?? 0) + 1);
    return [...n.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0][0];
  };
  const filled = new Map<string, Record<BenignSplit, number>>();
  const out: Array<BenignPackage<BenignSplit>> = [];
  for (const u of [...kept].sort((a, b) => sha256(`split:${a.ecosystem}:${a.name}`).localeCompare(sha256(`split:${b.ecosystem}:${b.name}`)))) {
    const lang = mainLang(u);
    const f = filled.get(lang) ?? { train: 0, validation: 0, heldout: 0 };
    const total = f.train + f.validation + f.heldout + u.files.length;
    // The side furthest below its share once this package is counted.
    const split = (Object.keys(SHARES) as BenignSplit[]).sort((a, b) => (f[a] + u.files.length) / total / SHARES[a] - (f[b] + u.files.length) / total / SHARES[b])[0];
    f[split] += u.files.length;
    filled.set(lang, f);
    out.push({ ecosystem: u.ecosystem, name: u.name, version: u.version, licence: u.licence, split, files: u.files.map((x) => [x.rel, x.sha, x.lang]) });
  }
  return out.sort((a, b) => `${a.ecosystem}:${a.name}`.localeCompare(`${b.ecosystem}:${b.name}`));
}

/** The manifest's packages, read back (bench and training). */
export function readBenignManifest(file = BENIGN_MANIFEST): BenignPackage[] {
  return gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as BenignPackage);
}

/** The text of one manifest file from the cache, or undefined when the cache lacks it. */
export function benignText(cache: string, sha: string): Buffer | undefined {
  const f = path.join(cache, 'files', sha.slice(0, 2), sha);
  return existsSync(f) ? readFileSync(f) : undefined;
}

/** Texts into the cache by SHA-256 (shared by the main and the fresh manifest). */
function storeTexts(cache: string, units: Unit[]): void {
  for (const u of units) {
    for (const f of u.files) {
      const dest = path.join(cache, 'files', f.sha.slice(0, 2), f.sha);
      if (!existsSync(dest)) {
        mkdirSync(path.dirname(dest), { recursive: true });
        writeFileSync(dest, f.content);
      }
    }
  }
}

const pypiNames = (list: string[]): string[] => list.map((s) => s.replace(/^win:/, '').split('==')[0]);

/**
 * What a fresh split's rule excludes: the main corpus and its picks, and each earlier fresh split
 * with its own picks (`read` reads a manifest file; the tests give their own).
 */
export function exclusionFor(split: FreshSplit, all: string[], meta: Map<string, DebianMeta>, read = readBenignManifest): Exclusion {
  const rule = FRESH_RULES[split];
  const earlier = [read(BENIGN_MANIFEST), ...rule.after.map((s) => read(freshManifest(s)))].flat();
  const picked = [
    ...debianList(all), ...NPM.map((s) => s.slice(0, s.lastIndexOf('@'))), ...pypiNames(PYPI),
    ...rule.after.flatMap((s) => [...freshDebianList(all, exclusionFor(s, all, meta, read), FRESH_RULES[s], meta), ...pypiNames(FRESH_RULES[s].pypi)]),
  ];
  return exclusion(earlier, picked, rule.bySource ? new Map([...meta].map(([name, m]) => [name, m.source])) : undefined);
}

function mainFresh(cache: string, split: FreshSplit): void {
  const rule = FRESH_RULES[split];
  const all = debianNames();
  const meta = debianMeta();
  const ex = exclusionFor(split, all, meta);
  const debs = freshDebianList(all, ex, rule, meta);
  console.log(`${split} Debian packages: ${debs.length}`);
  downloadDebian(cache, debs);
  const units = [...debianUnits(cache, debs), ...pypiUnits(cache, rule.pypi)];
  const packages = freshPackages(units, ex, split);
  const kept = new Set(packages.flatMap((p) => p.files.map(([, sha]) => sha)));
  storeTexts(cache, units.map((u) => ({ ...u, files: u.files.filter((f) => kept.has(f.sha)) })));
  writeFileSync(freshManifest(split), gzipSync(packages.map((p) => JSON.stringify(p)).join('\n') + '\n', { level: 9 }));
  const byLanguage: Record<string, number> = {};
  for (const p of packages) for (const [, , lang] of p.files) byLanguage[lang] = (byLanguage[lang] ?? 0) + 1;
  const files = packages.reduce((s, p) => s + p.files.length, 0);
  writeFileSync(freshSummary(split), `${JSON.stringify({ builtBy: `scripts/build-benign-corpus.ts --${split}`, files, packages: packages.length, byEcosystem: Object.fromEntries(['debian', 'npm', 'pypi'].map((e) => [e, packages.filter((p) => p.ecosystem === e).length])), byLanguage }, null, 2)}\n`);
  console.log(`${split}: ${files} scripts in ${packages.length} packages`, byLanguage);
}

function main(): void {
  const cache = path.resolve(arg('--cache', DEFAULT_CACHE));
  mkdirSync(cache, { recursive: true });
  const fresh = FRESH_SPLITS.find((s) => process.argv.includes(`--${s}`));
  if (fresh) return mainFresh(cache, fresh);
  const debs = debianList();
  console.log(`Debian packages: ${debs.length}`);
  downloadDebian(cache, debs);
  const units = [...debianUnits(cache, debs), ...npmUnits(cache), ...pypiUnits(cache)];
  storeTexts(cache, units);
  const packages = assignSplits(units);
  mkdirSync(path.dirname(BENIGN_MANIFEST), { recursive: true });
  writeFileSync(BENIGN_MANIFEST, gzipSync(packages.map((p) => JSON.stringify(p)).join('\n') + '\n', { level: 9 }));
  const summary: Record<string, Record<string, number>> = {};
  for (const p of packages) {
    for (const [, , lang] of p.files) {
      summary[lang] ??= { train: 0, validation: 0, heldout: 0 };
      summary[lang][p.split]++;
    }
  }
  const pk = { train: 0, validation: 0, heldout: 0 };
  for (const p of packages) pk[p.split]++;
  const files = packages.reduce((s, p) => s + p.files.length, 0);
  writeFileSync(SUMMARY, `${JSON.stringify({ builtBy: 'scripts/build-benign-corpus.ts', files, packages: pk, byLanguage: summary }, null, 2)}\n`);
  console.log(`${files} scripts in ${packages.length} packages`, pk, summary);
}

if (require.main === module) main();
