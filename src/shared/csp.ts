/**
 * The renderer's Content-Security-Policy: the same in Electron (meta tag in index.html, checked by
 * a test) and in the headless host. No inline scripts, no eval, no remote content.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** As a response header the policy can also forbid framing, which a meta tag cannot. */
export const CONTENT_SECURITY_POLICY_HEADER = `${CONTENT_SECURITY_POLICY}; frame-ancestors 'none'`;
