/**
 * Who may call what. Loopback by default; any other address needs a token, and then every route but
 * `/health` asks for it (`Authorization: Bearer`, or the cookie the page gets from `/?token=`). Routes
 * that change memory ask for the token even on loopback — or for a same-origin page session: the page
 * this server served carries a per-process page key that another site's page cannot read (no CORS), sent
 * back in a header that no cross-site form or `fetch` without CORS can set. The Host header must name
 * this server, so a DNS-rebinding page cannot pretend to be it.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { httpTokenPath } from "../home/paths.ts";

export type Access = "open" | "read" | "curate";

export const PAGE_KEY_HEADER = "x-triforge-page";
export const TOKEN_COOKIE = "triforge_token";

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

function randomKey(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

export interface ResolvedToken {
  token: string;
  /** Where it came from; `generated` was written to `path` just now (mode 0600). */
  source: "flag" | "env" | "stored" | "generated";
  path?: string;
}

/** `--token`, else TRIFORGE_HTTP_TOKEN, else the stored one, else a new one stored with mode 0600. */
export function resolveToken(flag: string | undefined, env = process.env): ResolvedToken {
  if (flag) return { token: flag, source: "flag" };
  if (env.TRIFORGE_HTTP_TOKEN) return { token: env.TRIFORGE_HTTP_TOKEN, source: "env" };
  const path = httpTokenPath();
  if (existsSync(path)) {
    const stored = readFileSync(path, "utf8").trim();
    if (stored) return { token: stored, source: "stored", path };
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const token = randomKey();
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { token, source: "generated", path };
}

/** Compares without an early exit, so the time taken says nothing about how much of a guess was right. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.get("cookie") ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

export interface AuthContext {
  token: string;
  pageKey: string;
  loopback: boolean;
  /** Reads need the token too: off loopback always, on loopback when asked (a machine shared with others). */
  readsNeedToken: boolean;
  /** Host header values that name this server (`127.0.0.1:8787`, `localhost:8787`, …). */
  hosts: Set<string>;
}

export function newPageKey(): string {
  return randomKey();
}

/** The Host names that reach a server bound to `host:port`. */
export function serverHosts(host: string, port: number): Set<string> {
  const names = isLoopback(host) ? ["127.0.0.1", "localhost", "[::1]", host] : [host];
  return new Set(
    names.map((name) => `${name.includes(":") && !name.startsWith("[") ? `[${name}]` : name}:${port}`),
  );
}

export type Denial = { status: 401 | 403; error: string };

/** Why `req` may not use a route of `access`, or undefined when it may. */
export function deny(req: Request, access: Access, context: AuthContext): Denial | undefined {
  const host = (req.headers.get("host") ?? "").toLowerCase();
  // A non-loopback server may sit behind a proxy that rewrites Host; the token guards it there.
  if (context.loopback && !context.hosts.has(host))
    return { status: 403, error: `the Host header '${host}' does not name this server` };
  if (access === "open") return undefined;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.get("authorization") ?? "")?.[1]?.trim();
  if (bearer !== undefined) {
    return sameSecret(bearer, context.token)
      ? undefined
      : { status: 401, error: "the bearer token is wrong" };
  }
  const fromCookie = cookie(req, TOKEN_COOKIE);
  const cookieOk = fromCookie !== undefined && sameSecret(fromCookie, context.token);
  if (access === "read" && (!context.readsNeedToken || cookieOk)) return undefined;
  if (access === "read") return { status: 401, error: "this server needs 'Authorization: Bearer <token>'" };
  // Curation without a bearer token: only the page this server served, from its own origin.
  const origin = req.headers.get("origin");
  const own = origin !== null && context.hosts.has(origin.replace(/^https?:\/\//, "").toLowerCase());
  if (origin !== null && !own) return { status: 403, error: `requests from ${origin} may not change memory` };
  if (req.headers.get("sec-fetch-site") === "cross-site")
    return { status: 403, error: "cross-site requests may not change memory" };
  const key = req.headers.get(PAGE_KEY_HEADER);
  if (key && sameSecret(key, context.pageKey) && (!context.readsNeedToken || cookieOk)) return undefined;
  return {
    status: 401,
    error:
      "changing memory needs 'Authorization: Bearer <token>' (see docs/http.md), or the page this server serves",
  };
}
