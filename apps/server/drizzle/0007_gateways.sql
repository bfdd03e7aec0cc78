CREATE TABLE `gateway_peers` (
	`gateway_id` integer NOT NULL,
	`public_key` text NOT NULL,
	`latest_handshake` integer DEFAULT 0 NOT NULL,
	`client_ip` text,
	`transfer_rx` integer DEFAULT 0 NOT NULL,
	`transfer_tx` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`gateway_id`, `public_key`),
	FOREIGN KEY (`gateway_id`) REFERENCES `gateways`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `gateway_peers_key_idx` ON `gateway_peers` (`public_key`);--> statement-breakpoint
CREATE TABLE `gateways` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`private_key_enc` text NOT NULL,
	`address` text NOT NULL,
	`endpoint` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `gateways_name_unique` ON `gateways` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `gateways_public_key_unique` ON `gateways` (`public_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `gateways_address_unique` ON `gateways` (`address`);