CREATE TABLE `acme_challenges` (
	`token` text PRIMARY KEY NOT NULL,
	`key_authorization` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `certificate_pems` (
	`domain_id` integer PRIMARY KEY NOT NULL,
	`fingerprint` text NOT NULL,
	`chain` text NOT NULL,
	`key_enc` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`domain_id`) REFERENCES `domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_at` integer NOT NULL
);
