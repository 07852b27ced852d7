# A dry run's plan of `rkc tune` (one shape: B=1,T=8192,H=32) as database
# rows, one a schedule: "measure" ones measured (the threads as the time, so
# that the fewest win), "pruned" ones pruned; @HASH@ and @VERSION@ left for
# the test to fill in.
s/^  \[ *[0-9]*\/[0-9]*\] chunk \([0-9]*\), value-tile \([0-9]*\), threads \([0-9]*\), prefetch \([0-9]\), split-scan \([0-9]\), factor-products \([0-9]\), prep-blocks \([0-9]\)\( (default)\)*: \(measure\|pruned\).*/{"spec":"eda","spec_hash":"@HASH@","shape":{"B":1,"T":8192,"H":32,"HV":32,"dk":128,"dv":128},"bucket":"bh=32,t=8192","dtype":"bf16","gpu":"TestGPU","arch":"sm_90a","rkc_version":"@VERSION@","schedule":{"chunk_size":\1,"value_tile":\2,"threads":\3,"prefetch":\4,"split_scan":\5,"factor_products":\6,"prep_blocks":\7},"default":@DEFAULT\8@,"status":"\9","median_ms":\3.\1,"p20_ms":\3.\1,"p80_ms":\3.\1,"time":"2026-11-30T10:00:00Z"}/
t row
d
:row
s/@DEFAULT (default)@/true/
s/@DEFAULT@/false/
s/"status":"measure"/"status":"ok"/
p
