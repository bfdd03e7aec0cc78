CREATE TABLE "acme_challenges" (
	"token" text PRIMARY KEY NOT NULL,
	"key_authorization" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "certificate_pems" (
	"domain_id" bigint PRIMARY KEY NOT NULL,
	"fingerprint" text NOT NULL,
	"chain" text NOT NULL,
	"key_enc" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "certificate_pems" ADD CONSTRAINT "certificate_pems_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;