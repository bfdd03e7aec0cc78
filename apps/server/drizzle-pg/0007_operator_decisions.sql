ALTER TABLE "http_services" ADD COLUMN "created_by" text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE "http_services" ADD COLUMN "disabled_by" text;--> statement-breakpoint
ALTER TABLE "http_services" ADD COLUMN "expiry_set_by" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "allow_token_networks" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "networks_set_by" text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "apply_error" text;--> statement-breakpoint
ALTER TABLE "tcp_services" ADD COLUMN "created_by" text DEFAULT 'admin' NOT NULL;--> statement-breakpoint
ALTER TABLE "tcp_services" ADD COLUMN "disabled_by" text;--> statement-breakpoint
ALTER TABLE "tcp_services" ADD COLUMN "expiry_set_by" text;