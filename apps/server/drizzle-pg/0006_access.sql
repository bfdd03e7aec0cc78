CREATE TABLE "access_policies" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"domain_id" bigint,
	"http_service_id" bigint,
	"mode" text DEFAULT 'public' NOT NULL,
	"provider_id" bigint,
	"allow_emails" text DEFAULT '[]' NOT NULL,
	"allow_email_domains" text DEFAULT '[]' NOT NULL,
	"allow_groups" text DEFAULT '[]' NOT NULL,
	"password_hash" text,
	"share_links" boolean DEFAULT false NOT NULL,
	"bypass_paths" text DEFAULT '[]' NOT NULL,
	"bypass_networks" text DEFAULT '[]' NOT NULL,
	"session_seconds" bigint DEFAULT 86400 NOT NULL,
	"epoch" bigint DEFAULT 1 NOT NULL,
	"set_by" text DEFAULT 'admin' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "access_sessions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sid" text NOT NULL,
	"policy_id" bigint NOT NULL,
	"http_service_id" bigint,
	"host" text NOT NULL,
	"method" text NOT NULL,
	"share_link_id" bigint,
	"subject" text,
	"email" text,
	"groups" text DEFAULT '[]' NOT NULL,
	"address" text,
	"expires_at" text NOT NULL,
	"revoked_at" text,
	"created_at" text NOT NULL,
	CONSTRAINT "access_sessions_sid_unique" UNIQUE("sid")
);
--> statement-breakpoint
CREATE TABLE "access_share_links" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"http_service_id" bigint NOT NULL,
	"name" text NOT NULL,
	"token_hash" text NOT NULL,
	"path_prefix" text,
	"expires_at" text,
	"revoked_at" text,
	"created_by" text DEFAULT 'admin' NOT NULL,
	"last_used_at" text,
	"uses" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "access_share_links_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "identity_providers" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_enc" text,
	"scopes" text DEFAULT '["openid","email","profile"]' NOT NULL,
	"groups_claim" text DEFAULT 'groups' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "identity_providers_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "access_policies" ADD CONSTRAINT "access_policies_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_policies" ADD CONSTRAINT "access_policies_http_service_id_http_services_id_fk" FOREIGN KEY ("http_service_id") REFERENCES "public"."http_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_policies" ADD CONSTRAINT "access_policies_provider_id_identity_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_sessions" ADD CONSTRAINT "access_sessions_policy_id_access_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."access_policies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_sessions" ADD CONSTRAINT "access_sessions_http_service_id_http_services_id_fk" FOREIGN KEY ("http_service_id") REFERENCES "public"."http_services"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_sessions" ADD CONSTRAINT "access_sessions_share_link_id_access_share_links_id_fk" FOREIGN KEY ("share_link_id") REFERENCES "public"."access_share_links"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_share_links" ADD CONSTRAINT "access_share_links_http_service_id_http_services_id_fk" FOREIGN KEY ("http_service_id") REFERENCES "public"."http_services"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "access_policies_domain_uq" ON "access_policies" USING btree ("domain_id");--> statement-breakpoint
CREATE UNIQUE INDEX "access_policies_service_uq" ON "access_policies" USING btree ("http_service_id");--> statement-breakpoint
CREATE INDEX "access_policies_provider_idx" ON "access_policies" USING btree ("provider_id");--> statement-breakpoint
CREATE INDEX "access_sessions_policy_idx" ON "access_sessions" USING btree ("policy_id","id");--> statement-breakpoint
CREATE INDEX "access_sessions_expiry_idx" ON "access_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "access_sessions_link_idx" ON "access_sessions" USING btree ("share_link_id");--> statement-breakpoint
CREATE INDEX "access_share_links_service_idx" ON "access_share_links" USING btree ("http_service_id","id");--> statement-breakpoint
-- The new tables' ids are filled like every autoincrement id (see 0001_sqlite_compat.sql).
SELECT postern_install_id_triggers();
