/**
 * Clips: the account's gallery of device clips, newest first, as a poster grid with MP4 playback.
 * Posters and videos are fetched with the Bearer header and shown from blob: URLs (an <img> or
 * <video> cannot send the header, and the key never goes into a URL); a video is fetched whole
 * before it plays.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, blobUrl } from '../api';
import { formatBytes, formatTime } from '../format';
import type { Clip, ClipList } from '../types';
import { ErrorBox, Field, Loading, Pager, Show, useLoad } from '../ui';
import type { PageDef } from './page';

const PAGE_SIZE = 24;

/** A blob: URL of an authenticated resource, revoked when the component goes or the path changes. */
function useBlobUrl(path: string | undefined): { url?: string; error?: unknown } {
  const [state, setState] = useState<{ url?: string; error?: unknown }>({});
  useEffect(() => {
    if (!path) return undefined;
    const abort = new AbortController();
    let url: string | undefined;
    setState({});
    blobUrl(path, abort.signal).then(
      (u) => { url = u; if (abort.signal.aborted) URL.revokeObjectURL(u); else setState({ url: u }); },
      (error: unknown) => { if (!abort.signal.aborted) setState({ error }); },
    );
    return () => { abort.abort(); if (url) URL.revokeObjectURL(url); };
  }, [path]);
  return state;
}

const served = (c: Clip) => c.status === 'delivered' || c.status === 'downloaded';

function facts(c: Clip): string {
  const parts = [
    c.frames !== undefined ? `${c.frames} frames` : undefined,
    c.fps !== undefined ? `${c.fps} fps` : undefined,
    c.durationMs !== undefined ? `${(c.durationMs / 1000).toFixed(1)} s` : undefined,
    c.width && c.height ? `${c.width}×${c.height}` : undefined,
  ];
  return parts.filter(Boolean).join(' · ');
}

function Poster({ clip }: { clip: Clip }) {
  const poster = useBlobUrl(served(clip) ? `/api/files/${encodeURIComponent(clip.id)}/poster` : undefined);
  if (!served(clip)) return <div class="poster empty">{clip.status}</div>;
  if (poster.error !== undefined) return <div class="poster empty">No poster</div>;
  if (!poster.url) return <div class="poster empty" role="status">Loading…</div>;
  return <img class="poster" src={poster.url} alt={`First frame of the clip from ${clip.source}`} />;
}

function Player({ clip, onClose }: { clip: Clip; onClose: () => void }) {
  const video = useBlobUrl(`/api/files/${encodeURIComponent(clip.id)}/video`);
  // The player opens above the grid: focus moves to it so keyboard and screen-reader users follow.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => { heading.current?.focus(); heading.current?.scrollIntoView({ block: 'nearest' }); }, []);
  return (
    <section class="panel player" aria-labelledby="player-h">
      <div class="title-row">
        <h2 id="player-h" tabIndex={-1} ref={heading}>Clip from {clip.source}</h2>
        <button type="button" class="secondary" onClick={onClose}>Close</button>
      </div>
      {video.error !== undefined ? <ErrorBox error={video.error} /> : video.url
        ? <video src={video.url} controls autoplay muted playsInline aria-label={`Clip from ${clip.source}`} />
        : <Loading what="Loading the video" />}
      <p class="muted">{facts(clip)} · {formatBytes(clip.size)} uploaded · {formatTime(clip.createdAt)}</p>
    </section>
  );
}

function Clips() {
  const [draft, setDraft] = useState('');
  const [entity, setEntity] = useState('');
  const [offset, setOffset] = useState(0);
  const [playing, setPlaying] = useState<Clip | undefined>();
  const list = useLoad(() => api<ClipList>('GET', '/api/files', { query: { kind: 'clip', limit: PAGE_SIZE, offset, entity_name: entity || undefined } }), [entity, offset]);
  const filter = (e: Event) => { e.preventDefault(); setOffset(0); setEntity(draft.trim()); };
  return (
    <>
      <h1 tabIndex={-1}>Clips</h1>
      <form class="panel filters" onSubmit={filter} aria-label="Filter clips">
        <Field label="Device"><input type="text" value={draft} pattern="[A-Za-z0-9_.\-]{1,64}" onInput={(e) => setDraft(e.currentTarget.value)} /></Field>
        <button type="submit">Show</button>
      </form>
      {playing ? <Player key={playing.id} clip={playing} onClose={() => setPlaying(undefined)} /> : null}
      <Show loaded={list}>{(l) => l.files.length === 0 && offset === 0 ? <p class="muted">No clips{entity ? ` from ${entity}` : ''}. Devices send clips with POST /api/entities/files (kind clip).</p> : (
        <>
          <ul class="clips" aria-label="Clips">
            {l.files.map((c) => (
              <li key={c.id} class="clip">
                <Poster clip={c} />
                <div class="clip-facts">
                  <strong>{c.source}</strong> <span class="badge info">{c.format ?? 'clip'}</span>
                  <div class="muted">{facts(c) || c.status}</div>
                  <div class="muted">{formatBytes(c.size)} · {formatTime(c.createdAt)}</div>
                </div>
                {served(c) && c.format !== 'gif'
                  ? <button type="button" onClick={() => setPlaying(c)} aria-label={`Play the clip from ${c.source}, ${formatTime(c.createdAt)}`}>Play</button>
                  : null}
              </li>
            ))}
          </ul>
          <Pager label={`Clips ${offset + 1}–${offset + l.files.length}`} hasPrev={offset > 0} hasNext={l.next_cursor !== null}
            onPrev={() => setOffset(Math.max(0, offset - PAGE_SIZE))} onNext={() => setOffset(Number(l.next_cursor ?? offset))} />
        </>
      )}</Show>
    </>
  );
}

export const pages: PageDef[] = [
  { pattern: '/clips', title: 'Clips', nav: { label: 'Clips' }, render: () => <Clips /> },
];
