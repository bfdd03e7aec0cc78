ALTER TABLE "http_services" ADD COLUMN "source" text;--> statement-breakpoint
ALTER TABLE "tcp_services" ADD COLUMN "source" text;