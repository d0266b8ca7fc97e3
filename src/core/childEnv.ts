/**
 * Children never inherit the server's whole environment (Hermes leaked every provider key to
 * every child): they get this allow-list plus exactly the extra variables their role needs.
 */
const ALLOWED_NAMES = new Set([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TERM',
  'PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'CONDA_PREFIX',
  'HF_HOME', 'HF_TOKEN', 'HF_HUB_OFFLINE', 'HF_DATASETS_OFFLINE', 'TRANSFORMERS_OFFLINE',
  'TRANSFORMERS_CACHE', 'HF_DATASETS_CACHE', 'TOKENIZERS_PARALLELISM',
  'CUDA_VISIBLE_DEVICES', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy',
]);
const ALLOWED_PREFIXES = ['LC_', 'XDG_'];

export function childEnv(
  base: Readonly<Record<string, string | undefined>>,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((p) => name.startsWith(p))) out[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value !== undefined) out[name] = value;
  }
  return out;
}
