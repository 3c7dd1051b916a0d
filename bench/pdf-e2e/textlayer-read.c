/* textlayer-read PDF TRUTH.json - runs fm_mathtext_read_region on every
 * formula box of a truth file (bench/detect/README.md format) and prints one
 * JSON object per line: index, kind, font setup, verdict, latex, reason,
 * truth latex. bench/pdf-e2e/textlayer scores them. */
#include "fm-document.h"
#include "fm-mathtext.h"

#include <json-glib/json-glib.h>

static const char *const verdicts[] = { "certain", "uncertain", "unavailable" };

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (FmDocument) doc = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *root;
  JsonArray *regions;

  if (argc != 3)
    {
      g_printerr ("usage: %s PDF TRUTH.json\n", argv[0]);
      return 2;
    }
  doc = fm_document_new_for_path (argv[1], NULL, &error);
  if (doc == NULL || !json_parser_load_from_file (parser, argv[2], &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  root = json_node_get_object (json_parser_get_root (parser));
  regions = json_object_get_array_member (root, "regions");
  for (guint i = 0; i < json_array_get_length (regions); i++)
    {
      JsonObject *o = json_array_get_object_element (regions, i);
      JsonArray *b = json_object_get_array_member (o, "box");
      const char *kind = json_object_get_string_member (o, "kind");
      FmRect box = { json_array_get_double_element (b, 0), json_array_get_double_element (b, 1),
                     json_array_get_double_element (b, 2), json_array_get_double_element (b, 3) };
      g_autoptr (FmRegion) region = NULL;
      FmMathTextResult *res;
      g_autoptr (JsonBuilder) jb = json_builder_new ();
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      g_autoptr (JsonNode) node = NULL;
      g_autofree char *line = NULL;

      if (g_strcmp0 (kind, "number") == 0)
        continue;
      region = fm_region_new ((int) json_object_get_int_member (o, "page") - 1,
                              g_strcmp0 (kind, "display") == 0 ? FM_REGION_DISPLAY : FM_REGION_INLINE, &box);
      res = fm_mathtext_read_region (doc, region, &error);
      json_builder_begin_object (jb);
      json_builder_set_member_name (jb, "index");
      json_builder_add_int_value (jb, i);
      json_builder_set_member_name (jb, "kind");
      json_builder_add_string_value (jb, kind);
      json_builder_set_member_name (jb, "truth");
      json_builder_add_string_value (jb, json_object_get_string_member (o, "latex"));
      if (res == NULL)
        {
          json_builder_set_member_name (jb, "error");
          json_builder_add_string_value (jb, error->message);
          g_clear_error (&error);
        }
      else
        {
          json_builder_set_member_name (jb, "verdict");
          json_builder_add_string_value (jb, verdicts[res->verdict]);
          json_builder_set_member_name (jb, "latex");
          json_builder_add_string_value (jb, res->latex);
          json_builder_set_member_name (jb, "reason");
          json_builder_add_string_value (jb, res->reason);
          json_builder_set_member_name (jb, "symbols");
          json_builder_add_int_value (jb, res->symbols->len);
          fm_mathtext_result_free (res);
        }
      json_builder_end_object (jb);
      node = json_builder_get_root (jb);
      json_generator_set_root (gen, node);
      line = json_generator_to_data (gen, NULL);
      g_print ("%s\n", line);
    }
  return 0;
}
