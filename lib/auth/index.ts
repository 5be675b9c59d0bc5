/** Who may do what: users, hashed API keys, roles, page sessions and the throttle on wrong credentials. */
export { roles, roleAllows, TOKEN_USER, type Caller, type Role } from "./roles";
export { authRequired, callerForSession, credentialEpoch, forgetAuthRequired, identify, requireRole, type Credential } from "./identify";
export { closeSession, openSession } from "./sessions";
export { createKey, createUser, listUsers, revokeKey, setUserRole, type ApiKeyView, type UserView } from "./users";
export { resetThrottle } from "./throttle";
