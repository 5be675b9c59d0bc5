import type { Metadata } from "next";
import { PeopleManager } from "@/components/people/people-manager";
import { Card } from "@/components/ui/card";
import { pageCaller } from "@/lib/api/page-caller";
import { authRequired } from "@/lib/auth";
import { listLabelAuthors } from "@/lib/labels/authors";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "People" };

/** Admins manage the team here: people, roles and API keys. */
export default async function PeoplePage() {
  const caller = await pageCaller();
  const locked = await authRequired();
  // Names that wrote labels but are no person here ("default": labels made before any key), listed below the people.
  const authors = caller.role === "admin" ? (await listLabelAuthors()).filter((a) => a.who !== "person") : [];
  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">People</h1>
        <p className="mt-1 text-sm text-slate-500">
          {locked
            ? "Everyone signs in with their own API key; their role decides what they may do."
            : "The server is open (one-person mode). Add yourself as an admin and create a key: from then on everyone needs a key."}
        </p>
      </div>
      {caller.role === "admin" ? (
        <PeopleManager me={caller.userId} open={!locked} labelAuthors={authors} />
      ) : (
        <Card className="p-5 text-sm text-slate-600" role="alert">
          Only admins manage people and keys; you are signed in as {caller.userId} ({caller.role}).
        </Card>
      )}
    </div>
  );
}
