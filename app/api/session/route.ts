import { signIn, signOut, sessionStatus } from "@/lib/api/sign-in";
import { route } from "@/lib/api/route";

export const dynamic = "force-dynamic";

/** Whether sign-in is required and whether this browser is signed in. */
export const GET = route({ public: true, handler: ({ req }) => sessionStatus(req) });

/** Sign in with an API key or API_TOKEN (JSON `{token}` or a form post from /signin); sets the session cookie. */
export const POST = route({ public: true, handler: ({ req }) => signIn(req) });

/** Sign out: the session is ended on the server and the cookie cleared. */
export const DELETE = route({ public: true, handler: ({ req }) => signOut(req) });
