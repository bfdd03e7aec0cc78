CREATE TABLE `node_label_reports` (
	`node_id` integer PRIMARY KEY NOT NULL,
	`checked_at` text NOT NULL,
	`problems` text DEFAULT '[]' NOT NULL,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
