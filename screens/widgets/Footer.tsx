/**
 * The footer (the notice and the keys that work now), the help overlay (every key of what lies under
 * it, disabled ones dimmed with the reason) and the two prompts that take the footer's place (trust a
 * host key, quit). All of them read the binding tables through the key handler's layers.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { footerText, promptOf } from '../input/bindings.js';
import { footerBindings, helpLayer } from '../input/handle-key.js';
import { useSelector } from '../store-context.js';
import { fit } from '../format.js';

export function Footer(props: { width: number }) {
  const notice = useSelector((s) => s.ui.notice);
  const keys = useSelector((s) => footerText(footerBindings(s)));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate" color="yellow">
        {fit(notice ?? '', props.width)}
      </Text>
      <Text wrap="truncate" dimColor>
        {fit(keys, props.width)}
      </Text>
    </Box>
  );
}

/** One row per binding: its keys and what it does; `disabled`: why it does not work now. */
interface HelpRow {
  keys: string;
  description: string;
  disabled?: string;
}

export function HelpOverlay(props: { width: number; height: number }) {
  // A string, so the overlay renders again only when what it lists changes.
  const json = useSelector((s) => {
    const layer = helpLayer(s);
    const rows = layer.bindings.map((b): HelpRow => {
      const reason = b.when?.(s);
      return {
        keys: b.keys.join(' / '),
        description: b.description,
        ...(reason !== undefined ? { disabled: reason } : {}),
      };
    });
    return JSON.stringify({ title: layer.title, rows });
  });
  const { title, rows } = JSON.parse(json) as { title: string; rows: HelpRow[] };
  const inner = props.width - 4;
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1} height={props.height}>
      <Text bold wrap="truncate">
        {fit(`Keys — ${title}`, inner)}
      </Text>
      {rows.slice(0, Math.max(1, props.height - 3)).map((r, i) => (
        <Text key={i} wrap="truncate" dimColor={r.disabled !== undefined}>
          {fit(
            `${r.keys.padEnd(14)} ${r.description}${r.disabled !== undefined ? ` — not now: ${r.disabled}` : ''}`,
            inner,
          )}
        </Text>
      ))}
    </Box>
  );
}

export function TrustPrompt(props: { width: number }) {
  const trust = useSelector((s) => promptOf(s, 'trust'));
  if (!trust) return null;
  const record =
    trust.knownHostsFile !== undefined
      ? `adds it to ${trust.knownHostsFile}`
      : 'trusts it for this session only (no known_hosts file to record it in)';
  return (
    <Box flexDirection="column">
      <Text color="yellow" wrap="truncate">
        {fit(
          `${trust.fingerprint} ${trust.keyType} — unknown host key of ${trust.host} (${trust.address})`,
          props.width,
        )}
      </Text>
      <Text color="yellow" wrap="truncate">
        {fit(
          `Trust it? y/n — y ${record}; compare: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the server`,
          props.width,
        )}
      </Text>
      {trust.certificateAuthority !== undefined ? (
        <Text color="yellow" wrap="wrap">
          {trust.certificateAuthority}
        </Text>
      ) : null}
    </Box>
  );
}

export function QuitPrompt(props: { width: number }) {
  const busy = useSelector((s) => s.busy);
  const question = busy
    ? 'Commands are running. Quit anyway (they are cancelled on every host)? y/n'
    : 'Quit l20-setup? y/n';
  return (
    <Box flexDirection="column">
      <Text color="red" wrap="truncate">
        {fit(question, props.width)}
      </Text>
      <Text> </Text>
    </Box>
  );
}
