CREATE TABLE "node_label_reports" (
	"node_id" bigint PRIMARY KEY NOT NULL,
	"checked_at" text NOT NULL,
	"problems" text DEFAULT '[]' NOT NULL
);
--> statement-breakpoint
ALTER TABLE "node_label_reports" ADD CONSTRAINT "node_label_reports_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;