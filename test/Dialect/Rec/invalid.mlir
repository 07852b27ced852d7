// RUN: rkc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{scale must be a positive finite number, got -1}}
rec.recurrence @negative_scale scale -1.0 {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{parameter 'n' must be an integer, got 1.500000e+00 : f64}}
rec.recurrence @float_param params {n = 1.5} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{parameter 'n' must be a positive integer, got 0}}
rec.recurrence @zero_param params {n = 0} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @duplicate_input {
  // expected-note @+1 {{first declared here}}
  %q = rec.input "q" : !rec.key
  // expected-error @+1 {{input "q" is declared twice}}
  %q2 = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q2 : !rec.key
  }
}

// -----

rec.recurrence @reserved_name {
  // expected-error @+1 {{input name "initial_state" is reserved}}
  %q = rec.input "initial_state" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @empty_name {
  // expected-error @+1 {{input name must not be empty}}
  %q = rec.input "" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{has no 'rec.step': a recurrence must say how the state is updated}}
rec.recurrence @no_step {
  %q = rec.input "q" : !rec.key
}

// -----

rec.recurrence @two_steps {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
  // expected-error @+1 {{is a second step of @two_steps: a recurrence has exactly one 'rec.step'}}
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @op_after_step {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
  // expected-error @+1 {{follows the 'rec.step': the step must be the last operation of the recurrence}}
  %late = rec.input "late" : !rec.key
}

// -----

rec.recurrence @no_update {
  %q = rec.input "q" : !rec.key
  // expected-error @+1 {{never updates the state}}
  rec.step {
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @no_read {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{has no 'rec.read': a recurrence must produce an output}}
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
  }
}

// -----

rec.recurrence @two_reads {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
    // expected-error @+1 {{is a second read of the step: a step produces one output per token}}
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @read_before_update {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{must be the last operation of the step: the read comes after the update}}
    rec.read %q : !rec.key
    rec.write %q, %v : !rec.key, !rec.value
  }
}

// -----

rec.recurrence @substep_outside_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key<substep>
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{operand #0 changes once per sub-step ('!rec.key<substep>') but is used outside a 'rec.repeat'}}
    rec.write %k, %v : !rec.key<substep>, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @unknown_count params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{count "m" is not a parameter of @unknown_count (parameters: n)}}
    rec.repeat "m" {
      rec.write %q, %v : !rec.key, !rec.value
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @count_without_params {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{count "n" is not a parameter of @count_without_params (parameters: none)}}
    rec.repeat "n" {
      rec.write %q, %v : !rec.key, !rec.value
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @empty_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    // expected-error @+1 {{has no factors to repeat}}
    rec.repeat "n" {
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @nested_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.repeat "n" {
      // expected-error @+1 {{'rec.repeat' op expects parent op 'rec.step'}}
      rec.repeat "n" {
        rec.write %q, %v : !rec.key, !rec.value
      }
    }
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @read_in_repeat params {n = 2} {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    rec.repeat "n" {
      rec.write %q, %v : !rec.key, !rec.value
      // expected-error @+1 {{'rec.read' op expects parent op 'rec.step'}}
      rec.read %q : !rec.key
    }
  }
}

// -----

rec.recurrence @key_plus_value {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.add' op dimension mismatch: cannot combine a key-side vector (dk) with a value-side vector (dv)}}
  %x = rec.add %q, %v : !rec.key, !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @dot_mismatch {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.dot' op dimension mismatch: cannot combine a value-side vector (dv) with a key-side vector (dk)}}
  %x = rec.dot %v, %q : !rec.value, !rec.key
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @project_mismatch {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.project_out' op dimension mismatch}}
  %x = rec.project_out %q along %v : !rec.key, !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @dot_of_scalar {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %s = rec.input "s" : !rec.scalar
  // expected-error @+1 {{'rec.dot' op operand #0 must be key- or value-side vector, but got '!rec.scalar'}}
  %x = rec.dot %s, %q : !rec.scalar, !rec.key
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @negative_eps {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{eps must be finite and non-negative, got -1}}
  %x = rec.l2norm %q {eps = -1.0 : f64} : !rec.key
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %x : !rec.key
  }
}

// -----

rec.recurrence @l2norm_of_scalar {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %s = rec.input "s" : !rec.scalar
  // expected-error @+1 {{'rec.l2norm' op operand #0 must be key- or value-side vector, but got '!rec.scalar'}}
  %x = rec.l2norm %s : !rec.scalar
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @infinite_constant {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{value must be finite}}
  %c = rec.constant 0x7FF0000000000000
  rec.step {
    rec.write %q, %v scale %c : !rec.key, !rec.value, !rec.scalar<head>
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @scalar_as_address {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %beta = rec.input "beta" : !rec.scalar
  rec.step {
    // expected-error @+1 {{'rec.erase' op operand #0 must be key-side vector (dk), but got '!rec.scalar'}}
    rec.erase %beta : !rec.scalar
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @value_as_key {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.delta' op operand #0 must be key-side vector (dk), but got '!rec.value'}}
    rec.delta %v, %v : !rec.value, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @value_gate {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.decay' op operand #0 must be log-space gate (scalar or per key channel), but got '!rec.value'}}
    rec.decay %v : !rec.value
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @vector_strength {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.write' op operand #2 must be scalar, but got '!rec.key'}}
    rec.write %q, %v scale %q : !rec.key, !rec.value, !rec.key
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @scalar_query {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  %s = rec.input "s" : !rec.scalar
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    // expected-error @+1 {{'rec.read' op operand #0 must be key-side vector (dk), but got '!rec.scalar'}}
    rec.read %s : !rec.scalar
  }
}

// -----

rec.recurrence @undefined_input {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{use of undeclared SSA value name}}
    rec.delta %k, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @expression_in_step {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.step {
    // expected-error @+1 {{'rec.l2norm' op expects parent op 'rec.recurrence'}}
    %qn = rec.l2norm %q : !rec.key
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

rec.recurrence @factor_outside_step {
  %q = rec.input "q" : !rec.key
  %v = rec.input "v" : !rec.value
  // expected-error @+1 {{'rec.write' op expects parent op to be one of 'rec.step, rec.repeat'}}
  rec.write %q, %v : !rec.key, !rec.value
  rec.step {
    rec.write %q, %v : !rec.key, !rec.value
    rec.read %q : !rec.key
  }
}

// -----

// expected-error @+1 {{'rec.input' op expects parent op 'rec.recurrence'}}
%q = rec.input "q" : !rec.key

// -----

rec.recurrence @bad_rate {
  // expected-error @+2 {{expected one of [head, token, substep] for how often a spec value changes, got: often}}
  // expected-error @+1 {{failed to parse Rec_KeyType parameter 'rate'}}
  %q = rec.input "q" : !rec.key<often>
}

// -----

//===----------------------------------------------------------------------===//
// Sub-steps and chunk-level IR
//===----------------------------------------------------------------------===//

rec.recurrence @substep_wrong_decay_tag {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %g = rec.input "g" : !rec.key
  %one = rec.constant 1.0
  rec.interleaved {
    // expected-error @+1 {{is tagged scalar_decay but its gate makes it channel_decay}}
    rec.substep<scalar_decay, no_rank1, writes, reads> decay(%g : !rec.key) write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  }
}

// -----

rec.recurrence @substep_wrong_rank1_tag {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %one = rec.constant 1.0
  rec.interleaved {
    // expected-error @+1 {{is tagged symmetric but its rank-1 vectors make it general}}
    rec.substep<no_decay, symmetric, no_write, reads> rank1(%k, %q, %one : !rec.key, !rec.key, !rec.scalar<head>) read(%q : !rec.key)
  }
}

// -----

rec.recurrence @substep_wrong_write_tag {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %one = rec.constant 1.0
  rec.interleaved {
    // expected-error @+1 {{is tagged writes but has no write operands}}
    rec.substep<no_decay, symmetric, writes, reads> rank1(%k, %k, %one : !rec.key, !rec.key, !rec.scalar<head>) read(%q : !rec.key)
  }
}

// -----

rec.recurrence @substep_wrong_read_tag {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.interleaved {
    // expected-error @+1 {{is tagged no_read but has query}}
    rec.substep<no_decay, no_rank1, writes, no_read> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  }
}

// -----

rec.recurrence @substep_undecayed_without_rank1 {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.interleaved {
    // expected-error @+1 {{has undecayed_read but no rank-1 factor}}
    rec.substep<no_decay, no_rank1, writes, reads> undecayed_read write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  }
}

// -----

rec.recurrence @substep_negative_index {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.interleaved {
    // expected-error @+1 {{index must be non-negative}}
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key) {index = -1 : i64}
  }
}

// -----

rec.recurrence @interleaved_empty {
  %q = rec.input "q" : !rec.key
  // expected-error @+1 {{has no sub-steps}}
  rec.interleaved {
  }
}

// -----

rec.recurrence @interleaved_no_final_read {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  // expected-error @+1 {{must end with its reading sub-step}}
  rec.interleaved {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
    rec.substep<no_decay, no_rank1, writes, no_read> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>)
  }
}

// -----

rec.recurrence @interleaved_two_reads {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.interleaved {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
    // expected-error @+1 {{is a second reading sub-step}}
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  }
}

// -----

rec.recurrence @interleaved_foreign_op {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.interleaved {
    // expected-error @+1 {{'builtin.module' op is not a 'rec.substep'}}
    builtin.module {}
  }
}

// -----

rec.recurrence @chunked_bad_size {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  // expected-error @+1 {{chunk_size must be positive, got 0}}
  rec.chunked chunk_size(0) substeps_per_token(1) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    rec.chunk.yield %s : !rec.tile<key, value>
  }
}

// -----

rec.recurrence @chunked_wrong_count {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  // expected-error @+1 {{substeps_per_token is 2 but the table has 1 sub-steps}}
  rec.chunked chunk_size(16) substeps_per_token(2) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    rec.chunk.yield %s : !rec.tile<key, value>
  }
}

// -----

rec.recurrence @chunked_foreign_table_op {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  rec.chunked chunk_size(16) substeps_per_token(1) table {
    // expected-error @+1 {{'builtin.module' op is not a 'rec.substep'}}
    builtin.module {}
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    rec.chunk.yield %s : !rec.tile<key, value>
  }
}

// -----

rec.recurrence @chunked_bad_state {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  // expected-error @+1 {{body must take the entering state !rec.tile<key, value>}}
  rec.chunked chunk_size(16) substeps_per_token(1) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<chunk, value>):
    rec.chunk.yield %s : !rec.tile<chunk, value>
  }
}

// -----

rec.recurrence @chunked_no_yield {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  // expected-error @+1 {{body must end with 'rec.chunk.yield'}}
  rec.chunked chunk_size(16) substeps_per_token(1) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    %r = rec.chunk.rows query : !rec.tile<chunk, key>
  }
}

// -----

rec.recurrence @matmul_inner_mismatch {
  %q = rec.input "q" : !rec.key
  %k = rec.input "k" : !rec.key
  %v = rec.input "v" : !rec.value
  %one = rec.constant 1.0
  rec.chunked chunk_size(16) substeps_per_token(1) table {
    rec.substep<no_decay, no_rank1, writes, reads> write(%k, %v, %one : !rec.key, !rec.value, !rec.scalar<head>) read(%q : !rec.key)
  } body {
  ^bb0(%s: !rec.tile<key, value>):
    %x = rec.chunk.rows value : !rec.tile<chunk, value>
    // expected-error @+1 {{contracts '!rec.tile<chunk, value>' with '!rec.tile<key, value>': the inner axes differ}}
    %o = rec.chunk.matmul %x, %s : (!rec.tile<chunk, value>, !rec.tile<key, value>) -> !rec.tile<chunk, value>
    rec.chunk.yield %s : !rec.tile<key, value>
  }
}

// -----

rec.recurrence @bad_tile_axis {
  // expected-error @+1 {{expected a tile axis (chunk, key, value, one), got 'row'}}
  %q = rec.input "q" : !rec.tile<row, key>
}

// -----

rec.recurrence @slots_on_key_axis {
  // expected-error @+1 {{only a chunk axis keeps sub-step slots}}
  %q = rec.input "q" : !rec.tile<chunk, key[1]>
}
