-- sizing.virtualization_overhead: VM against bare metal on matched configurations.
WITH sides AS (
    SELECT model, gpu_model, precision, batch_per_device, synthetic, gpus, nodes,
           virtualization, median(images_per_sec) AS images_per_sec, count(*) AS runs,
           string_agg(DISTINCT system, ';' ORDER BY system) AS systems
    FROM core.training_runs
    WHERE status = 'ok' AND mode = 'training' AND images_per_sec > 0
      AND virtualization IN ('vm', 'bare-metal')
    GROUP BY ALL
    HAVING median(images_per_sec) > 0  -- a median of tiny rates can round to 0
)
SELECT vm.model, vm.gpu_model, vm.precision, vm.batch_per_device, vm.synthetic, vm.gpus,
       vm.nodes, vm.images_per_sec AS vm_images_per_sec,
       bm.images_per_sec AS bare_metal_images_per_sec,
       100.0 * (1 - vm.images_per_sec / nullif(bm.images_per_sec, 0)) AS overhead_pct,
       vm.runs AS vm_runs, bm.runs AS bare_metal_runs,
       vm.systems AS vm_systems, bm.systems AS bare_metal_systems
FROM sides vm
JOIN sides bm
  ON bm.virtualization = 'bare-metal' AND vm.virtualization = 'vm'
 AND bm.model IS NOT DISTINCT FROM vm.model AND bm.gpu_model IS NOT DISTINCT FROM vm.gpu_model
 AND bm.precision IS NOT DISTINCT FROM vm.precision
 AND bm.batch_per_device IS NOT DISTINCT FROM vm.batch_per_device
 AND bm.synthetic IS NOT DISTINCT FROM vm.synthetic
 AND bm.gpus = vm.gpus AND bm.nodes IS NOT DISTINCT FROM vm.nodes
ORDER BY ALL
