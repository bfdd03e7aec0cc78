CREATE TABLE `certificates` (
	`domain_id` integer PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`issuer` text,
	`not_before` text,
	`not_after` text,
	`fingerprint` text,
	`error` text,
	`next_attempt_at` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`domain_id`) REFERENCES `domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `domains` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain` text NOT NULL,
	`ssl` text DEFAULT 'self-signed' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domains_domain_unique` ON `domains` (`domain`);--> statement-breakpoint
CREATE TABLE `http_services` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`node_id` integer NOT NULL,
	`name` text NOT NULL,
	`domain` text DEFAULT '' NOT NULL,
	`path_location` text DEFAULT '/' NOT NULL,
	`backend_proto` text DEFAULT 'http' NOT NULL,
	`backend_host` text NOT NULL,
	`backend_port` integer DEFAULT 80 NOT NULL,
	`allowed_ips` text DEFAULT '[]' NOT NULL,
	`blocked_ips` text DEFAULT '[]' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`apply_error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `http_services_route_uq` ON `http_services` (`domain`,`path_location`);--> statement-breakpoint
CREATE INDEX `http_services_node_idx` ON `http_services` (`node_id`,`id`);--> statement-breakpoint
CREATE INDEX `http_services_domain_idx` ON `http_services` (`domain`,`id`);--> statement-breakpoint
CREATE TABLE `nodes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`address` text NOT NULL,
	`allow_internet` integer DEFAULT false NOT NULL,
	`is_gateway` integer DEFAULT false NOT NULL,
	`gateway_network` text,
	`is_local` integer DEFAULT false NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`public_key` text NOT NULL,
	`private_key_enc` text NOT NULL,
	`preshared_key_enc` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `nodes_address_uq` ON `nodes` (`address`);--> statement-breakpoint
CREATE INDEX `nodes_gateway_idx` ON `nodes` (`is_gateway`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `nodes_public_key_uq` ON `nodes` (`public_key`);--> statement-breakpoint
CREATE TABLE `personal_access_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`node_id` integer NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`expire_at` text,
	`revoked` integer DEFAULT false NOT NULL,
	`last_used_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `personal_access_tokens_token_hash_unique` ON `personal_access_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `pats_node_idx` ON `personal_access_tokens` (`node_id`,`id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tcp_services` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`node_id` integer NOT NULL,
	`name` text NOT NULL,
	`domain` text,
	`proto` text DEFAULT 'tcp' NOT NULL,
	`port` integer NOT NULL,
	`ssl` integer DEFAULT false NOT NULL,
	`backend_host` text NOT NULL,
	`backend_port` integer NOT NULL,
	`allowed_ips` text DEFAULT '[]' NOT NULL,
	`blocked_ips` text DEFAULT '[]' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`apply_error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tcp_services_port_uq` ON `tcp_services` (`proto`,`port`);--> statement-breakpoint
CREATE INDEX `tcp_services_node_idx` ON `tcp_services` (`node_id`,`id`);--> statement-breakpoint
CREATE INDEX `tcp_services_domain_idx` ON `tcp_services` (`domain`,`id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);