/** A download of a streamed export (CSV or JSON) with the bytes received so far shown. */
import { useState } from 'preact/hooks';
import { download, Query, saveFile } from '../api';
import { formatBytes } from '../format';
import { ErrorBox, Progress } from '../ui';

export function ExportButton({ path, query, label }: { path: string; query: Query; label: string }) {
  const [received, setReceived] = useState<number | undefined>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string | undefined>();
  const run = async () => {
    setError(undefined);
    setDone(undefined);
    setReceived(0);
    try {
      const { blob, filename } = await download(path, query, setReceived);
      saveFile(blob, filename);
      setDone(`${filename} (${formatBytes(blob.size)})`);
    } catch (err) {
      setError(err);
    } finally {
      setReceived(undefined);
    }
  };
  return (
    <div class="export">
      <button type="button" onClick={run} disabled={received !== undefined}>{label}</button>
      {received !== undefined ? <Progress label={`Downloading… ${formatBytes(received)} received`} value={received} /> : null}
      {done ? <span role="status" class="muted">Downloaded {done}</span> : null}
      {error !== undefined ? <ErrorBox error={error} /> : null}
    </div>
  );
}
