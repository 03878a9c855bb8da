/**
 * The cluster inventory and settings. Everything that ever reaches a command line is constrained
 * here first (names, addresses, paths), and quoted again by the transport.
 */
import { z } from 'zod';
import { parseProxyJump } from '../transport/ssh-config-parse.js';

/**
 * Linux interface names: 1–15 bytes, no '/', ':' or whitespace, not '.' or '..' (dev_valid_name).
 * Stricter than the kernel in one way: no leading '-', since the name is a positional argument of
 * ethtool, mlnx_qos and dcb, which would read "-s" or "--help" as an option (quoting cannot help).
 */
export const interfaceName = z
  .string()
  .regex(
    /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,14}$/,
    'an interface name: 1–15 letters, digits, "_", "." or "-", not starting with "-"',
  )
  .refine((s) => s !== '.' && s !== '..', 'an interface name other than "." or ".."');

const hostLabel = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const ipv6 = /^[0-9A-Fa-f:.]{2,45}$/;

export const hostAddress = z
  .string()
  .min(1, 'a host name or IP address')
  .max(253, 'at most 253 characters')
  .refine(
    (s) => ipv4.test(s) || (s.includes(':') && ipv6.test(s)) || s.split('.').every((l) => hostLabel.test(l)),
    'a DNS name, an IPv4 or an IPv6 address',
  );

export const hostName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/,
    'a short name: letters, digits, "_", "." or "-", at most 63, starting with a letter or digit',
  );

export const unixUser = z
  .string()
  .regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'a POSIX user name: lower-case letters, digits, "_" or "-", at most 32');

/**
 * A local file path (identity files, known_hosts): printable, no NUL/newline, and not starting with
 * "-", which ssh, scp or rsync would read as an option if the path ever reaches their command line
 * (a file whose name starts with "-" is still reachable as ./-name).
 */
export const localPath = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'a file path without control characters')
  .refine((s) => !s.startsWith('-'), 'a file path not starting with "-" (write ./-name for such a file)');

/** A ProxyJump value that ssh accepts (readconf.c parse_jump): printable, each hop a user, host and port. */
export const jumpHosts = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^\u0000-\u0020\u007f]+$/, 'jump hosts without spaces or control characters')
  .refine((s) => !s.startsWith('-'), 'jump hosts not starting with "-"')
  .refine(
    (s) => parseProxyJump(s) !== undefined,
    'jump hosts as ssh -J takes them: [user@]host[:port], comma-separated',
  )
  .refine((s) => {
    const parsed = parseProxyJump(s);
    if (parsed === undefined || parsed.none) return true;
    // Each hop ends up in a command line (ssh -W, ProxyCommand tokens): names and addresses only.
    return parsed.hops.every(
      (hop) =>
        hostAddress.safeParse(hop.host).success && (hop.user === undefined || unixUser.safeParse(hop.user).success),
    );
  }, 'each jump host a DNS name or IP address, each user a POSIX user name');

export const authSchema = z.discriminatedUnion('method', [
  z.object({ method: z.literal('agent') }).strict(),
  z.object({ method: z.literal('identityFile'), path: localPath }).strict(),
]);

export const hostSchema = z
  .object({
    name: hostName,
    /** Address to connect to; may be an alias of ~/.ssh/config (resolved as OpenSSH does). */
    address: hostAddress,
    port: z.number().int().min(1).max(65535).optional(),
    user: unixUser.optional(),
    auth: authSchema.optional(),
    role: z.enum(['head', 'worker']),
    mgmtInterface: interfaceName.optional(),
    fabricPorts: z.array(interfaceName).max(16).optional(),
    /** Extra known_hosts file checked before ~/.ssh/known_hosts (the lab writes its own). */
    knownHostsFile: localPath.optional(),
    /**
     * Jump hosts, as ssh's ProxyJump (`-J`) takes them: `[user@]host[:port]`, several separated by commas,
     * the first reached directly; each may be a ~/.ssh/config alias. Wins over the ssh config's ProxyJump
     * and ProxyCommand; `none` reaches the host directly even when the ssh config names a jump host.
     */
    jump: jumpHosts.optional(),
    /**
     * How the host is reached: `ssh2` (built in), `openssh` (the system's ssh with a ControlMaster), or `auto`
     * (the default: OpenSSH when the resolved config uses what the built-in transport cannot, else ssh2).
     */
    transport: z.enum(['ssh2', 'openssh', 'auto']).optional(),
    /** Pins the host key: the connection is refused unless the key has this SHA256 fingerprint. */
    hostKeyFingerprint: z
      .string()
      .regex(
        /^SHA256:[A-Za-z0-9+/]{43}$/,
        'a SHA256 fingerprint as ssh-keygen -lf prints it (SHA256: and 43 base64 characters)',
      )
      .optional(),
  })
  .strict();

export const networkSchema = z
  .object({
    design: z.enum(['A', 'B', 'tutorial']).default('A'),
    mtu: z.number().int().min(1280).max(9216).default(9000),
  })
  .strict();

export const qosSchema = z
  .object({
    /** PFC/ETS priority carrying RoCE (3 is the vendor default for lossless RoCE). */
    priority: z.number().int().min(0).max(7).default(3),
    /** DSCP value RoCE traffic is marked with; DSCP>>3 must equal the priority (26 → 3). */
    dscp: z.number().int().min(0).max(63).default(26),
    trust: z.enum(['dscp', 'pcp']).default('dscp'),
  })
  .strict();

export const ncclSchema = z
  .object({
    gidIndex: z.union([z.literal('auto'), z.number().int().min(0).max(255)]).default('auto'),
    crossNic: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(0),
    debug: z.enum(['WARN', 'INFO', 'TRACE', 'VERSION']).default('WARN'),
  })
  .strict();

export const raySchema = z
  .object({
    port: z.number().int().min(1024).max(65535).default(6379),
    dashboardPort: z.number().int().min(1024).max(65535).default(8265),
  })
  .strict();

const modelId = z
  .string()
  .max(200)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/,
    'a Hugging Face model id such as "Qwen/Qwen2.5-7B-Instruct"',
  );

export const vllmSchema = z
  .object({
    model: modelId.default('Qwen/Qwen2.5-7B-Instruct'),
    port: z.number().int().min(1024).max(65535).default(8000),
    layout: z.enum(['auto', 'dp', 'tp-pp']).default('auto'),
  })
  .strict();

export const clusterSchema = z
  .object({
    version: z.literal(1).default(1),
    hosts: z
      .array(hostSchema)
      .min(1, 'at least one host')
      .max(256)
      // The issue points at the second host with the name, so the message names that field.
      .superRefine((hs, ctx) => {
        const first = new Map<string, number>();
        hs.forEach((h, i) => {
          const j = first.get(h.name);
          if (j === undefined) first.set(h.name, i);
          else
            ctx.addIssue({
              code: 'custom',
              message: `unique host names (hosts[${j}] has this name too)`,
              path: [i, 'name'],
            });
        });
      }),
    network: networkSchema.default({ design: 'A', mtu: 9000 }),
    qos: qosSchema.default({ priority: 3, dscp: 26, trust: 'dscp' }),
    nccl: ncclSchema.default({ gidIndex: 'auto', crossNic: 0, debug: 'WARN' }),
    ray: raySchema.default({ port: 6379, dashboardPort: 8265 }),
    vllm: vllmSchema.default({ model: 'Qwen/Qwen2.5-7B-Instruct', port: 8000, layout: 'auto' }),
  })
  .strict()
  .refine((c) => c.qos.dscp >> 3 === c.qos.priority || c.qos.trust === 'pcp', {
    message: 'qos.dscp >> 3 must equal qos.priority (DSCP 26 maps to priority 3)',
    path: ['qos', 'dscp'],
  });

export type ClusterConfig = z.infer<typeof clusterSchema>;
export type HostConfig = z.infer<typeof hostSchema>;
export type ClusterInput = z.input<typeof clusterSchema>;
