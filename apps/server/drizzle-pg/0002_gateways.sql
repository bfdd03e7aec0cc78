CREATE TABLE "gateway_peers" (
	"gateway_id" bigint NOT NULL,
	"public_key" text NOT NULL,
	"latest_handshake" bigint DEFAULT 0 NOT NULL,
	"client_ip" text,
	"transfer_rx" bigint DEFAULT 0 NOT NULL,
	"transfer_tx" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "gateway_peers_gateway_id_public_key_pk" PRIMARY KEY("gateway_id","public_key")
);
--> statement-breakpoint
CREATE TABLE "gateways" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"private_key_enc" text NOT NULL,
	"address" text NOT NULL,
	"endpoint" text NOT NULL,
	"last_seen_at" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "gateways_name_unique" UNIQUE("name"),
	CONSTRAINT "gateways_public_key_unique" UNIQUE("public_key"),
	CONSTRAINT "gateways_address_unique" UNIQUE("address")
);
--> statement-breakpoint
ALTER TABLE "gateway_peers" ADD CONSTRAINT "gateway_peers_gateway_id_gateways_id_fk" FOREIGN KEY ("gateway_id") REFERENCES "public"."gateways"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "gateway_peers_key_idx" ON "gateway_peers" USING btree ("public_key");--> statement-breakpoint
-- gateways.id is filled like every autoincrement id (see 0001_sqlite_compat.sql).
SELECT postern_install_id_triggers();
