/** The `scan` node's file form: a file stored by file transfer, scanned by a workflow of the same account. */
import { fleet, Fleet } from '../messaging/helpers';
import { sendFile, settled } from '../files/helpers';
import { newAccount } from '../../support/env';
import { createWorkflow, node, startRun, waitForRun } from './helpers';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const scanFlow = { name: 'scan a stored file', nodes: [{ id: 'sc', type: 'scan', config: { file_id: '{{ input.file }}' } }], edges: [] };

describe('scan node with file_id', () => {
  let f: Fleet;
  let fileId: string;
  beforeAll(async () => {
    f = await fleet('pro', ['a', 'b']);
    const sent = await sendFile(f.devices.a.apiKey, PDF, 'report.pdf', { dest: 'b' });
    expect(sent.status).toBe(202);
    fileId = sent.body.id as string;
    expect((await settled(f.devices.a.apiKey, fileId)).status).toBe('delivered');
  });

  it('scans a delivered file of the account through the file pipeline', async () => {
    const wf = await createWorkflow(f.apiKey, scanFlow);
    const run = await waitForRun(f.apiKey, await startRun(f.apiKey, wf, { file: fileId }));
    expect(run.status).toBe('completed');
    const out = node(run, 'sc').output as Record<string, unknown>;
    expect(out).toMatchObject({ fileType: 'pdf', safetyScore: { threatLevel: 'Clean' } });
  });

  it("fails the node for another account's file, naming it as not found", async () => {
    const other = await newAccount('pro');
    const wf = await createWorkflow(other.apiKey, scanFlow);
    const run = await waitForRun(other.apiKey, await startRun(other.apiKey, wf, { file: fileId }));
    expect(run.status).toBe('failed');
    expect(String(node(run, 'sc').error)).toMatch(/not found in this account/);
  });
});
