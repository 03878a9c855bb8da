/**
 * Secrets planted with every quote and separator (issue 16 item 7), for the redaction tests: each line as a
 * host file may hold it and the words of its secret — made-up words (zq…) found nowhere else, so "0 bytes of
 * the secret survive" is checked as "none of its words is left" (a value cut anywhere leaves one behind).
 */
const LINES: ReadonlyArray<{ line: string; kept?: string }> = [
  { line: `PASSWORD='zqalfa zqbravo;zqcharlie,zqdelta"zqecho'` },
  { line: String.raw`DB_PASSWORD="zqfoxtrot\"zqgolf zqhotel;zqindia,'zqjuliet"` },
  { line: String.raw`PASSWORD=zqkilo\ zqlima\;zqmike\,zqnovember` },
  { line: String.raw`export TOKEN=$'zqoscar\'s zqpapa\nzqquebec;zqromeo'` },
  {
    line: String.raw`{"password": "zqsierra \"zqtango\" ,;} zquniform", "user": "root"}`,
    kept: '"user": "root"}',
  },
  { line: `  password: "zqvictor zqwhiskey;zqxray, zqyankee"` },
  { line: `  db_password: 'zqzulu it''s, zqamber;zqbasalt'` },
  { line: 'NCCL_PASSWORD=zqcobalt zqdune;zqember,zqfjord' },
  {
    line: `ExecStart=/bin/tool --password 'zqgranite zqharbor;zqislet' --port 8000`,
    kept: ' --port 8000',
  },
  {
    line: String.raw`cmd HF_API_TOKEN=zqjasper\ zqkestrel;zqlagoon,zqmeadow next`,
    kept: ' next',
  },
  {
    line: `Environment="DB_PASSWORD=zqnectar zqopal;zqprism,zqquartz" "HF_HOME=/srv/hf"`,
    kept: '"HF_HOME=/srv/hf"',
  },
  { line: `{'api_key': 'zqraven, zqslate;zqtundra zqumber'}`, kept: '}' },
  { line: `SSH_PASSPHRASE="zqvale\\\\zqwren \\$zqxenon"` },
];

/** Each line with the words of its secret (every zq… word in it) and the text after it that must stay. */
export const PLANTED: ReadonlyArray<{ line: string; words: readonly string[]; kept?: string }> = LINES.map((l) => ({
  ...l,
  words: l.line.match(/zq[a-z]+/g) ?? [],
}));
