CREATE TABLE "account_invites" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"username" text NOT NULL,
	"role" text NOT NULL,
	"created_by" bigint,
	"expires_at" text NOT NULL,
	"used_at" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "account_invites_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "actor_account_id" bigint;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "actor_via" text;--> statement-breakpoint
ALTER TABLE "identity_providers" ADD COLUMN "console_sign_in" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "identity_providers" ADD COLUMN "console_group_roles" text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "via" text DEFAULT 'password' NOT NULL;--> statement-breakpoint
ALTER TABLE "sign_in_challenges" ADD COLUMN "via" text DEFAULT 'password' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "role" text DEFAULT 'viewer' NOT NULL;--> statement-breakpoint
-- Hand-written: the accounts of before roles (the one admin of the spec) are owners; a new account's role is
-- always named when it is made, and the column's default is the least privileged role.
UPDATE "users" SET "role" = 'owner';--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_sign_in" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "identity_provider_id" bigint;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "identity_issuer" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "identity_subject" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "identity_email" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "last_sign_in_at" text;--> statement-breakpoint
ALTER TABLE "account_invites" ADD CONSTRAINT "account_invites_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_invites_expiry_idx" ON "account_invites" USING btree ("expires_at");--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_identity_provider_id_identity_providers_id_fk" FOREIGN KEY ("identity_provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_account_idx" ON "audit_events" USING btree ("actor_account_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_identity_idx" ON "users" USING btree ("identity_issuer","identity_subject");--> statement-breakpoint
-- The new table's id is filled like every autoincrement id (see 0001_sqlite_compat.sql).
SELECT postern_install_id_triggers();
