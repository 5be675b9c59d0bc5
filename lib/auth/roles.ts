/** Roles of a team's people, weakest first: viewers read, annotators also label and run, admins also manage people, keys and settings. */
export const roles = ["viewer", "annotator", "admin"] as const;
export type Role = (typeof roles)[number];

/** Whether `role` may do what needs `needed`. */
export function roleAllows(role: Role, needed: Role): boolean {
  return roles.indexOf(role) >= roles.indexOf(needed);
}

/** Who made a request: the user id written on labels, mappings and templates, and the role it acts with. */
export type Caller = {
  userId: string;
  role: Role;
  /** `open`: no credential is configured (one-person mode, `X-User-Id` honoured); `token`: API_TOKEN; `key`: a user's API key; `session`: a page sign-in. */
  via: "open" | "token" | "key" | "session";
  keyId?: number;
};

/** The user API_TOKEN signs in as: existing single-token setups keep working, as their admin. */
export const TOKEN_USER = "admin";
