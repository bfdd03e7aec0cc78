CREATE TABLE `acme_accounts` (
	`directory_url` text PRIMARY KEY NOT NULL,
	`key_enc` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `acme_cas` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`directory_url` text NOT NULL,
	`email` text,
	`eab_key_id` text,
	`eab_hmac_enc` text,
	`is_default` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `acme_cas_name_unique` ON `acme_cas` (`name`);--> statement-breakpoint
CREATE TABLE `dns_providers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`secret_enc` text NOT NULL,
	`propagation_timeout_seconds` integer DEFAULT 120 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dns_providers_name_unique` ON `dns_providers` (`name`);--> statement-breakpoint
ALTER TABLE `certificates` ADD `last_attempt_at` text;--> statement-breakpoint
ALTER TABLE `certificates` ADD `names` text;--> statement-breakpoint
ALTER TABLE `domains` ADD `challenge` text DEFAULT 'http-01' NOT NULL;--> statement-breakpoint
ALTER TABLE `domains` ADD `dns_provider_id` integer REFERENCES dns_providers(id);--> statement-breakpoint
ALTER TABLE `domains` ADD `acme_ca_id` integer REFERENCES acme_cas(id);