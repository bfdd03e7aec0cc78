CREATE TABLE "audit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" text NOT NULL,
	"actor_kind" text NOT NULL,
	"actor_name" text,
	"actor_token_id" bigint,
	"address" text,
	"action" text NOT NULL,
	"target_type" text,
	"target_id" bigint,
	"target_name" text,
	"node_id" bigint,
	"domain" text,
	"before" text,
	"after" text,
	"detail" text
);
--> statement-breakpoint
CREATE TABLE "certificates" (
	"domain_id" bigint PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"issuer" text,
	"not_before" text,
	"not_after" text,
	"fingerprint" text,
	"error" text,
	"next_attempt_at" text,
	"failures" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "domains" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"domain" text NOT NULL,
	"ssl" text DEFAULT 'self-signed' NOT NULL,
	"owner_node_id" bigint,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "domains_domain_unique" UNIQUE("domain")
);
--> statement-breakpoint
CREATE TABLE "http_services" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"node_id" bigint NOT NULL,
	"name" text NOT NULL,
	"domain" text DEFAULT '' NOT NULL,
	"path_location" text DEFAULT '/' NOT NULL,
	"backend_proto" text DEFAULT 'http' NOT NULL,
	"backend_host" text NOT NULL,
	"backend_port" bigint DEFAULT 80 NOT NULL,
	"allowed_ips" text DEFAULT '[]' NOT NULL,
	"blocked_ips" text DEFAULT '[]' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"apply_error" text,
	"expires_at" text,
	"health_interval_seconds" bigint,
	"health_timeout_seconds" bigint,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"address" text NOT NULL,
	"allow_internet" boolean DEFAULT false NOT NULL,
	"is_gateway" boolean DEFAULT false NOT NULL,
	"gateway_network" text,
	"extra_gateway_networks" text DEFAULT '[]' NOT NULL,
	"is_local" boolean DEFAULT false NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"public_key" text NOT NULL,
	"private_key_enc" text NOT NULL,
	"preshared_key_enc" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "personal_access_tokens" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"node_id" bigint NOT NULL,
	"name" text NOT NULL,
	"token_hash" text NOT NULL,
	"expire_at" text,
	"revoked" boolean DEFAULT false NOT NULL,
	"last_used_at" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "personal_access_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "recovery_codes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" bigint NOT NULL,
	"code_hash" text NOT NULL,
	"used_at" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" bigint NOT NULL,
	"expires_at" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tcp_services" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"node_id" bigint NOT NULL,
	"name" text NOT NULL,
	"domain" text,
	"proto" text DEFAULT 'tcp' NOT NULL,
	"port" bigint NOT NULL,
	"ssl" boolean DEFAULT false NOT NULL,
	"backend_host" text NOT NULL,
	"backend_port" bigint NOT NULL,
	"allowed_ips" text DEFAULT '[]' NOT NULL,
	"blocked_ips" text DEFAULT '[]' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"apply_error" text,
	"expires_at" text,
	"health_interval_seconds" bigint,
	"health_timeout_seconds" bigint,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "traffic_minutes" (
	"service_type" text NOT NULL,
	"service_id" bigint NOT NULL,
	"minute" bigint NOT NULL,
	"s1" bigint DEFAULT 0 NOT NULL,
	"s2" bigint DEFAULT 0 NOT NULL,
	"s3" bigint DEFAULT 0 NOT NULL,
	"s4" bigint DEFAULT 0 NOT NULL,
	"s5" bigint DEFAULT 0 NOT NULL,
	"bytes_in" bigint DEFAULT 0 NOT NULL,
	"bytes_out" bigint DEFAULT 0 NOT NULL,
	"latency" text,
	"sessions" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"seconds_sum" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "traffic_minutes_service_type_service_id_minute_pk" PRIMARY KEY("service_type","service_id","minute")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"password_hash" text NOT NULL,
	"totp_secret_enc" text,
	"totp_pending_secret_enc" text,
	"totp_last_step" bigint,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "users_username_unique" UNIQUE("username")
);
--> statement-breakpoint
ALTER TABLE "certificates" ADD CONSTRAINT "certificates_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domains" ADD CONSTRAINT "domains_owner_node_id_nodes_id_fk" FOREIGN KEY ("owner_node_id") REFERENCES "public"."nodes"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "http_services" ADD CONSTRAINT "http_services_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "personal_access_tokens" ADD CONSTRAINT "personal_access_tokens_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recovery_codes" ADD CONSTRAINT "recovery_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tcp_services" ADD CONSTRAINT "tcp_services_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_at_idx" ON "audit_events" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_node_idx" ON "audit_events" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "audit_domain_idx" ON "audit_events" USING btree ("domain","id");--> statement-breakpoint
CREATE INDEX "audit_action_idx" ON "audit_events" USING btree ("action","id");--> statement-breakpoint
CREATE INDEX "domains_owner_idx" ON "domains" USING btree ("owner_node_id");--> statement-breakpoint
CREATE UNIQUE INDEX "http_services_route_uq" ON "http_services" USING btree ("domain","path_location");--> statement-breakpoint
CREATE INDEX "http_services_node_idx" ON "http_services" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "http_services_domain_idx" ON "http_services" USING btree ("domain","id");--> statement-breakpoint
CREATE INDEX "http_services_expiry_idx" ON "http_services" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "nodes_address_uq" ON "nodes" USING btree ("address");--> statement-breakpoint
CREATE INDEX "nodes_gateway_idx" ON "nodes" USING btree ("is_gateway","id");--> statement-breakpoint
CREATE UNIQUE INDEX "nodes_public_key_uq" ON "nodes" USING btree ("public_key");--> statement-breakpoint
CREATE INDEX "pats_node_idx" ON "personal_access_tokens" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "recovery_codes_user_idx" ON "recovery_codes" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tcp_services_port_uq" ON "tcp_services" USING btree ("proto","port");--> statement-breakpoint
CREATE INDEX "tcp_services_node_idx" ON "tcp_services" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "tcp_services_domain_idx" ON "tcp_services" USING btree ("domain","id");--> statement-breakpoint
CREATE INDEX "tcp_services_expiry_idx" ON "tcp_services" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "traffic_minutes_minute_idx" ON "traffic_minutes" USING btree ("minute");