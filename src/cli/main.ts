/**
 * The operator CLI (docs/contract.md §6): `npm run cli -- <command> [--flags]`.
 * JSON on stdout and exit 0; on error a message on stderr and a non-zero exit. It uses the
 * service's configuration and never starts a database: the embedded engine opens DATA_DIR/db/
 * beside a running service (on a FerretDB-era DATA_DIR not imported yet, it imports first, as a
 * start does: storage/import-ferretdb.ts, which refuses, naming the service, while a running
 * service holds that DATA_DIR; `migrate` skips that import, being the import from the addresses
 * it is given); with MONGODB_URI unset the MongoDB engine connects to the local stack's FerretDB
 * on MONGO_PORT.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { createLogger } from '../log';
import { loadSecrets } from '../secrets';
import { connectStorage } from '../storage/mongo';
import { openDatabase } from '../storage/engine';
import { importFromMongo } from '../storage/import-mongo';
import { createServices, Services } from '../services';
import { AppError, BadRequestError } from '../errors';
import { loadFeedFiles } from '../scan/engines/feeds';
import { refreshCveDataset } from '../scan/cve-import';
import { operatorCveDatasetPath } from '../scan/datasets';

type Handler = (s: Services, flags: Record<string, string | undefined>) => Promise<unknown>;

interface Command { usage: string; flags: string[]; required: string[]; run: Handler }

const COMMANDS: Record<string, Command> = {
  'account create': {
    usage: 'account create --name N --plan free|starter|standard|pro',
    flags: ['name', 'plan'], required: ['name', 'plan'],
    run: (s, f) => s.accounts.createAccount({ name: f.name as string, plan: f.plan as string }),
  },
  'account set-plan': {
    usage: 'account set-plan --account ID --plan free|starter|standard|pro',
    flags: ['account', 'plan'], required: ['account', 'plan'],
    run: (s, f) => s.accounts.setPlan(f.account as string, f.plan as string),
  },
  'key create': {
    usage: 'key create --account ID',
    flags: ['account'], required: ['account'],
    run: (s, f) => s.accounts.createAccountKey(f.account as string),
  },
  'entity create': {
    usage: 'entity create --account ID --name N [--role R]',
    flags: ['account', 'name', 'role'], required: ['account', 'name'],
    run: async (s, f) => {
      const e = await s.entities.createEntity(f.account as string, { name: f.name as string, role: f.role });
      await s.audit.record({
        accountId: f.account as string, action: 'create', resourceType: 'entity', resourceId: e.resourcePath,
        resourceName: e.name, userEmail: 'cli', details: { apiKeyId: e.apiKeyId, role: f.role ?? 'default' },
      });
      return { name: e.name, resourcePath: e.resourcePath, apiKeyId: e.apiKeyId, apiKey: e.apiKey };
    },
  },
  'feeds load': {
    usage: 'feeds load --files a.txt,b.csv   (plain hash lists or abuse.ch-style CSV)',
    flags: ['files'], required: ['files'],
    run: (s, f) => loadFeedFiles(s.threatFeeds, (f.files as string).split(',').map((x) => x.trim()).filter(Boolean)),
  },
  migrate: {
    usage: 'migrate --from mongodb://HOST:27017/ [--from-blobs mongodb://HOST:27018/]   (DATABASE_ENGINE=embedded: copy a MongoDB-era database in; safe to re-run)',
    flags: ['from', 'from-blobs'], required: ['from'],
    run: async (s, f) => {
      if (s.storage.engine !== 'embedded') throw new BadRequestError('migrate copies into the embedded store: run it with DATABASE_ENGINE=embedded');
      // A database named in the URI is the one read (an outside probe's `--from mongodb://host/otherdb`
      // read MONGODB_DB's, found nothing and said so with exit 0); else MONGODB_DB, as the service does.
      const dbOf = (uri: string | undefined): string | undefined => {
        if (!uri) return undefined;
        const name = decodeURIComponent(new URL(uri).pathname.replace(/^\//, ''));
        return name || undefined;
      };
      const mongodbDb = dbOf(f.from) ?? s.config.mongodbDb;
      const mongodbBlobDb = dbOf(f['from-blobs']) ?? (dbOf(f.from) ? `${mongodbDb}_blobs` : s.config.mongodbBlobDb);
      const source = await connectStorage({
        ...s.config, databaseEngine: 'mongodb', mongodbUri: f.from, mongodbBlobUri: f['from-blobs'] ?? f.from, mongodbDb, mongodbBlobDb,
      });
      try {
        const counts = await importFromMongo(source, s.storage.embedded);
        const keyed = (counts.records.entity_keys?.read ?? 0) + (counts.records.vault?.read ?? 0) + (counts.records.connectors?.read ?? 0);
        // Entity keys are signed, and vault entries, connectors and webhook credentials sealed, with
        // the source's secrets (a probe's migrated devices all got 401 under the new DATA_DIR's).
        const note = keyed > 0 && !(s.config.entityKeySecret && s.config.dataEncryptionKey)
          ? 'entity keys and sealed values were copied as made with the source\'s ENTITY_KEY_SECRET and DATA_ENCRYPTION_KEY: '
            + 'run this DATA_DIR\'s service with those two set to the source\'s values (a FerretDB-era DATA_DIR of this machine used this DATA_DIR\'s secrets.json already: nothing to do)'
          : undefined;
        return { database: mongodbDb, ...counts, ...(note ? { warning: note } : {}) };
      } finally {
        await source.close();
      }
    },
  },
  'cve refresh': {
    usage: 'cve refresh --files nvd-1.json,nvd-2.json   (NVD CVE JSON 2.0 files)',
    flags: ['files'], required: ['files'],
    run: async (s, f) => {
      const target = operatorCveDatasetPath(s.config, true);
      const counts = refreshCveDataset((f.files as string).split(',').map((x) => x.trim()).filter(Boolean), target);
      return { ...counts, dataset: target };
    },
  },
};

function usage(): string {
  return `usage: npm run -s cli -- <command> [--flags]\ncommands:\n${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0])) {
    process.stdout.write(usage());
    return 0;
  }
  // The command is the words before the first flag: a flag's value is not one of them.
  const firstFlag = argv.findIndex((a) => a.startsWith('-'));
  const words = firstFlag < 0 ? argv : argv.slice(0, firstFlag);
  const name = Object.keys(COMMANDS).find((k) => k.split(' ').length === words.length && k.split(' ').every((w, i) => words[i] === w));
  if (!name) {
    process.stderr.write(`unknown command "${words.join(' ')}"\n${usage()}`);
    return 2;
  }
  // Node's parser keeps the last of a repeated flag: `--plan free --plan pro` made a pro account.
  const given = argv.filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=')[0]);
  const twice = given.find((f, i) => given.indexOf(f) !== i);
  if (twice) {
    process.stderr.write(`--${twice} is given twice\nusage: npm run -s cli -- ${COMMANDS[name].usage}\n`);
    return 2;
  }
  const cmd = COMMANDS[name];
  let values: Record<string, string | undefined>;
  try {
    const parsed = parseArgs({
      args: argv.slice(name.split(' ').length),
      options: Object.fromEntries(cmd.flags.map((f) => [f, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    });
    values = parsed.values as Record<string, string | undefined>;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\nusage: npm run -s cli -- ${cmd.usage}\n`);
    return 2;
  }
  const missing = cmd.required.filter((f) => !values[f]);
  if (missing.length) {
    process.stderr.write(`missing ${missing.map((m) => `--${m}`).join(', ')}\nusage: npm run -s cli -- ${cmd.usage}\n`);
    return 2;
  }
  const config = loadConfig();
  if (name === 'migrate' && config.databaseEngine !== 'embedded') {
    // Before opening anything: a probe's migrate on the MongoDB engine failed connecting to it instead of saying this.
    process.stderr.write('error: migrate copies into the embedded store: run it with DATABASE_ENGINE=embedded\n');
    return 1;
  }
  const logger = createLogger('silent');
  // migrate reads the FerretDB it is pointed at, often this DATA_DIR's own, run by the previous
  // version's `npm start`: the automatic import would start a second FerretDB on those files (or
  // refuse because of the first), and migrate copies the same data anyway.
  const storage = await openDatabase(config, logger, { importFerretdb: name !== 'migrate' });
  try {
    const services = createServices({ config, logger, storage, secrets: loadSecrets(config) });
    const result = await cmd.run(services, values);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } finally {
    await storage.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const msg = err instanceof AppError ? err.message : err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${msg}\n`);
    process.exit(1);
  },
);
