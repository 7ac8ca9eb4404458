/**
 * The gate's glob matching lives in lib/git/glob.ts: the executor side matches
 * build output with it too, and nothing the executor loads may reach lib/gate/
 * (tests/forge_authority.test.ts).
 */
export * from "../git/glob.ts";
