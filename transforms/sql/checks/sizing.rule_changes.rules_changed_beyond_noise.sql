SELECT family, rule_label, metric, old_value, new_value, round(change_pct, 2) AS change_pct,
       round(margin_pct, 2) AS margin_pct, context_changes
FROM sizing.rule_changes WHERE exceeds_margin
ORDER BY abs(change_pct) DESC NULLS FIRST, family, rule_label, metric
