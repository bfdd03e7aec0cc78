CREATE TABLE "acme_accounts" (
	"directory_url" text PRIMARY KEY NOT NULL,
	"key_enc" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "acme_cas" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"directory_url" text NOT NULL,
	"email" text,
	"eab_key_id" text,
	"eab_hmac_enc" text,
	"is_default" boolean DEFAULT false NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "acme_cas_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "dns_providers" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"settings" text DEFAULT '{}' NOT NULL,
	"secret_enc" text NOT NULL,
	"propagation_timeout_seconds" bigint DEFAULT 120 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "dns_providers_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "last_attempt_at" text;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "names" text;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "challenge" text DEFAULT 'http-01' NOT NULL;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "dns_provider_id" bigint;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "acme_ca_id" bigint;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_dns_provider_id_dns_providers_id_fk" FOREIGN KEY ("dns_provider_id") REFERENCES "public"."dns_providers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_acme_ca_id_acme_cas_id_fk" FOREIGN KEY ("acme_ca_id") REFERENCES "public"."acme_cas"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
-- The new tables' ids are filled like every autoincrement id (see 0001_sqlite_compat.sql).
SELECT postern_install_id_triggers();
